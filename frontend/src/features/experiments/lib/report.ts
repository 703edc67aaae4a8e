import { readCI, readDelta } from './aggregate';
import type { CI, Delta } from '../api';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export interface ReportRow {
  number: number;
  promptVersion: number | null;
  all: CI;
  holdout: CI;
  refinement: CI;
  spent: number;
  overfitting: boolean;
}

export interface ReportView {
  objective: string | null;
  iterations: ReportRow[];
  durationSeconds: number | null;
  stopReason: string | null;
  best: { iteration: number | null; version: number | null; chosenOn: string; score: CI; overfitting: boolean } | null;
  firstVsLast: { first: number | null; last: number | null; all: (Delta & { a: number | null; b: number | null }) | null; holdout: Delta | null } | null;
  costByPhase: Array<{ phase: string; micros: number }>;
  totalMicros: number;
  tokensIn: number | null;
  tokensOut: number | null;
  models: Array<{ name: string; score: CI; costPerCase: number | null }>;
  recommendedModel: string | null;
  weakCriteria: Array<{ name: string; mean: number | null }>;
  nextSteps: string[];
  bestPrompt: { number: number | null; template: string } | null;
}

/** The report (core/experiments/report.py) read into what the page shows. */
export function readReport(raw: unknown): ReportView {
  const r = obj(raw);
  const e = obj(r.experiment);
  const best = r.best ? obj(r.best) : null;
  const fvl = obj(r.first_vs_last);
  const cost = obj(r.cost);
  const tokens = obj(r.tokens);
  const all = fvl.all ? obj(fvl.all) : null;
  const bp = r.best_prompt ? obj(r.best_prompt) : null;
  return {
    objective: typeof e.objective === 'string' ? e.objective : null,
    iterations: arr(r.iterations).map((x) => {
      const o = obj(x);
      return { number: num(o.number) ?? 0, promptVersion: num(o.prompt_version), all: readCI(o.all), holdout: readCI(o.holdout), refinement: readCI(o.refinement), spent: num(o.spent_micros) ?? 0, overfitting: o.likely_overfitting === true };
    }),
    durationSeconds: num(e.duration_s),
    stopReason: typeof e.stop_detail === 'string' ? e.stop_detail : typeof e.stop_reason === 'string' ? e.stop_reason.replace(/_/g, ' ') : null,
    best: best ? { iteration: num(best.iteration), version: num(best.prompt_version), chosenOn: String(best.chosen_on ?? 'holdout'), score: readCI(best.score), overfitting: best.likely_overfitting === true } : null,
    firstVsLast: Object.keys(fvl).length
      ? { first: num(fvl.first), last: num(fvl.last), all: all ? { ...(readDelta(all) as Delta), a: num(all.mean_a), b: num(all.mean_b) } : null, holdout: readDelta(fvl.holdout ?? null) }
      : null,
    costByPhase: ['execution', 'judging', 'refinement', 'assist'].map((phase) => ({ phase, micros: num(cost[`${phase}_micros`]) ?? 0 })),
    totalMicros: num(cost.total_micros) ?? 0,
    tokensIn: num(tokens.input),
    tokensOut: num(tokens.output),
    models: arr(r.models).map((m) => ({ name: String(obj(m).name ?? '?'), score: readCI(obj(m).score), costPerCase: num(obj(m).cost_per_case_micros) })),
    recommendedModel: r.recommended_model ? String(obj(r.recommended_model).name ?? '') || null : null,
    weakCriteria: arr(r.weak_criteria).map((w) => ({ name: String(obj(w).name ?? w), mean: num(obj(w).mean) })),
    nextSteps: arr(r.next_steps).filter((s): s is string => typeof s === 'string'),
    bestPrompt: bp ? { number: num(bp.number), template: String(bp.template ?? '') } : null,
  };
}

export const EXPORTS = [
  { key: 'pdf', label: 'Report (PDF)' },
  { key: 'md', label: 'Report (Markdown)' },
  { key: 'prompt-txt', label: 'Best prompt (.txt)' },
  { key: 'prompt-md', label: 'Best prompt (.md)' },
  { key: 'csv', label: 'Results (CSV)' },
  { key: 'bundle', label: 'Bundle (.zip)' },
] as const;
