import type { CI, Delta, IterationSummary, ModelAggregate, SplitScores } from '../api';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function readCI(v: unknown): CI {
  if (typeof v === 'number') return { mean: v, low: null, high: null };
  const o = obj(v);
  return { mean: n(o.mean), low: n(o.low), high: n(o.high), n: n(o.n) ?? undefined };
}

/** A paired comparison (mean_difference, low, high, p_value, verdict). */
export function readDelta(v: unknown): Delta | null {
  if (v === null || v === undefined) return null;
  const o = obj(v);
  return { delta: n(o.mean_difference) ?? n(o.delta), low: n(o.low), high: n(o.high), verdict: typeof o.verdict === 'string' ? o.verdict : null, p_value: n(o.p_value) };
}

function split(v: unknown): SplitScores | null {
  if (v === null || v === undefined) return null;
  const o = obj(v);
  const criteria: Record<string, CI> = {};
  for (const [k, c] of Object.entries(obj(o.criteria))) criteria[k] = readCI(c);
  return { composite: readCI(o.composite), criteria };
}

/**
 * The iteration's aggregate per model (core/experiments/aggregate.py): on all, refinement
 * and held-out cases, with the paired delta vs the previous iteration per set.
 */
export function modelsOf(it: { aggregate?: unknown } | null | undefined): ModelAggregate[] {
  const agg = obj(it?.aggregate);
  const deltas = obj(agg.delta);
  const cases = obj(agg.cases);
  const wins = obj(agg.win_rate);
  return Object.entries(obj(agg.models)).map(([label, entry]) => {
    const e = obj(entry);
    const d = obj(deltas[label]);
    const perCase: Record<string, number> = {};
    for (const [c, v] of Object.entries(obj(cases[label]))) if (typeof v === 'number') perCase[c] = v;
    return {
      model: label,
      all: split(e.all) ?? { composite: { mean: null, low: null, high: null }, criteria: {} },
      refinement: split(e.refinement),
      holdout: split(e.holdout),
      delta: readDelta(d.all),
      refinement_delta: readDelta(d.refinement),
      holdout_delta: readDelta(d.holdout),
      cases: perCase,
      win_rate: label in wins ? { ...readCI(wins[label]), source: String(obj(wins[label]).source ?? 'composite') } : null,
    };
  });
}

/** The aggregate's best model (its `best_model`), else the highest composite. */
export function headline(models: ModelAggregate[], best?: unknown): ModelAggregate | null {
  const named = typeof best === 'string' ? models.find((m) => m.model === best) : undefined;
  if (named) return named;
  return models.reduce<ModelAggregate | null>((top, m) => ((m.all.composite.mean ?? -Infinity) > (top?.all.composite.mean ?? -Infinity) ? m : top), null);
}

export const bestModelOf = (it: { aggregate?: unknown } | null | undefined) => obj(it?.aggregate).best_model;

/** Wilson 95% interval of a proportion. */
export function wilson(wins: number, total: number): CI {
  if (total <= 0) return { mean: null, low: null, high: null, n: 0 };
  const z = 1.96;
  const p = wins / total;
  const denom = 1 + (z * z) / total;
  const centre = (p + (z * z) / (2 * total)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / total + (z * z) / (4 * total * total))) / denom;
  return { mean: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half), n: total };
}

/**
 * Win rate of `current` over `previous` on the cases both scored (per-case composite; a tie
 * counts half), with a Wilson interval.
 */
export function winRate(current: Record<string, number>, previous: Record<string, number>): CI {
  let wins = 0;
  let total = 0;
  for (const [c, v] of Object.entries(current)) {
    const before = previous[c];
    if (before === undefined) continue;
    total += 1;
    if (v > before + 1e-9) wins += 1;
    else if (Math.abs(v - before) <= 1e-9) wins += 0.5;
  }
  return wilson(wins, total);
}

export interface TrendPoint {
  iteration: number;
  composite: number | null;
  /** Error bar of the composite: [below, above] the mean. */
  ci: [number, number] | null;
  holdout: number | null;
  holdoutCi: [number, number] | null;
}

const bar = (c: CI | undefined): [number, number] | null => (c && c.mean !== null && c.low !== null && c.high !== null ? [c.mean - c.low, c.high - c.mean] : null);

/** Points of the trend chart, one per scored iteration, with 95% CI error bars where known. */
export function trendPoints(items: IterationSummary[], details: Array<{ number: number; aggregate?: unknown } | undefined> = []): TrendPoint[] {
  const byNumber = new Map(details.filter(Boolean).map((d) => [d!.number, d!]));
  return [...items]
    .sort((a, b) => a.number - b.number)
    .filter((i) => i.composite !== null || i.holdout_composite !== null)
    .map((i) => {
      const d = byNumber.get(i.number);
      const top = d ? headline(modelsOf(d), bestModelOf(d)) : null;
      return { iteration: i.number, composite: i.composite, ci: bar(top?.all.composite), holdout: i.holdout_composite, holdoutCi: bar(top?.holdout?.composite) };
    });
}
