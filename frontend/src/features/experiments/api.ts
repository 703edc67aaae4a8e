// Experiments (issue 16): paths and payload types of the experiment, iteration, review,
// lineage, report and AI-assist endpoints, and the mapping of the wizard's form to the
// server's step-keyed configuration.
import type { components, paths } from '@/api/schema';
import { request } from '@/features/datasets/api';
import { dollarsToMicros, microsToDollars } from '@/lib/money';
import { emptyDraft, type DraftForm } from './lib/draft';

export { request };

export const experimentsPath = (p: number) => `/api/projects/${p}/experiments`;
export const experimentPath = (p: number, e: number) => `${experimentsPath(p)}/${e}`;
export const iterationPath = (p: number, e: number, n: number) => `${experimentPath(p, e)}/iterations/${n}`;

type Schemas = components['schemas'];
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type One = '/api/projects/{project_id}/experiments/{experiment_id}';
type It = `${One}/iterations/{number}`;

export type Experiment = Schemas['ExperimentDetail'];
export type ExperimentListItem = Json<paths['/api/projects/{project_id}/experiments']['get']['responses'][200]>['items'][number];
export type ExperimentStatus = Experiment['status'];
export type IterationSummary = Json<paths[`${One}/iterations`]['get']['responses'][200]>['items'][number];
export type Iteration = Json<paths[It]['get']['responses'][200]>;
export type IterationStatus = Iteration['status'];
export type Suggestion = Json<paths[`${It}/suggestion`]['get']['responses'][200]>;
export type Progress = Json<paths[`${One}/progress`]['get']['responses'][200]>;
export type Estimate = Json<paths[`${One}/estimate`]['get']['responses'][200]>;
export type Approved = Json<paths[`${It}/approve`]['post']['responses'][200]>;
export type IterationFacets = Json<paths[`${It}/facets`]['get']['responses'][200]>;
/** Which cases a view covers: the refiner's, the held-out ones it never sees, or all. */
export type CaseSplit = IterationFacets['split'];

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export type StepConfig = Record<string, unknown>;
export type ExperimentConfig = Partial<Record<'objective' | 'rubric' | 'prompt' | 'data' | 'models' | 'judges' | 'stop', StepConfig>>;

/** A mean with its 95% interval (bootstrap), as the aggregate stores it. */
export interface CI {
  mean: number | null;
  low: number | null;
  high: number | null;
  n?: number;
}

/** A paired difference vs the previous iteration, with its verdict. */
export interface Delta {
  delta: number | null;
  low: number | null;
  high: number | null;
  verdict: string | null;
  p_value?: number | null;
}

export interface SplitScores {
  composite: CI;
  criteria: Record<string, CI>;
}

export interface ModelAggregate {
  model: string;
  all: SplitScores;
  refinement: SplitScores | null;
  holdout: SplitScores | null;
  delta: Delta | null;
  refinement_delta: Delta | null;
  holdout_delta: Delta | null;
  /** Per-case composites (case id → 0..1), for win rates against another iteration. */
  cases: Record<string, number>;
  /** The server's win rate vs the previous iteration: from the pairwise judge's verdicts
   * when the experiment has one, else from per-case composites. */
  win_rate: (CI & { source: string }) | null;
}

/** One failing exemplar the refiner saw. */
export interface Exemplar {
  case_id: number;
  input: unknown;
  output: string;
  scores: Record<string, number | null>;
  rationales?: Record<string, string>;
  composite?: number | null;
  model?: string;
}

export type Template = Json<paths['/api/projects/{project_id}/experiment-templates']['get']['responses'][200]>[number];

/** Form → the server's step-keyed configuration (core/experiments/config.py). */
export function toConfig(d: DraftForm): ExperimentConfig {
  let tools: unknown[] = [];
  if (d.tools_schema.trim()) {
    try {
      const parsed: unknown = JSON.parse(d.tools_schema);
      tools = Array.isArray(parsed) ? parsed : [parsed];
    } catch {
      tools = []; // the form shows the JSON error; the last valid tools stay saved
    }
  }
  let spend: number | null = null;
  try {
    spend = dollarsToMicros(d.max_spend_dollars);
  } catch {
    spend = null;
  }
  const grid: Record<string, number[]> = {};
  if (d.grid_temperatures.length) grid.temperature = d.grid_temperatures;
  if (d.grid_max_tokens.length) grid.max_tokens = d.grid_max_tokens;
  const stop: StepConfig = {
    max_iterations: d.max_iterations,
    min_delta: d.min_delta,
    convergence_window: d.convergence_window,
    budget_alert_threshold: d.budget_alert,
    max_total_tokens: d.max_tokens_total,
    stop_if_no_suggestion: true, // the loop can only stop without a suggestion (the API refuses false)
    max_rejections: d.max_rejections,
  };
  if (spend !== null) stop.max_budget_micros = spend;
  return {
    objective: { goal: d.objective },
    rubric: { criteria: d.rubric.map((c) => ({ name: c.name, description: c.description, weight: c.weight, scale: { min: c.scale_min, max: c.scale_max } })) },
    // Half-written few-shots stay in the form until both turns are filled.
    prompt: { template: d.prompt_text, system: d.system_text || null, few_shots: d.few_shots.filter((f) => f.user.trim() && f.assistant.trim()).map((f) => ({ input: f.user, output: f.assistant })), tools },
    data: { dataset_version_id: d.dataset_version_id, holdout_fraction: d.holdout_fraction },
    models: {
      targets: d.targets.map((t) => ({ model_id: t.model_config_id, params: { temperature: t.temperature, max_tokens: t.max_tokens }, grid: Object.keys(grid).length ? grid : null })),
    },
    judges: { pointwise: d.judge_model_ids, refiner: d.refiner_id, pairwise: d.pairwise, pairwise_judge: d.pairwise ? (d.judge_model_ids[0] ?? null) : null, safety: { pii: d.safety_pii, jailbreak: d.safety_jailbreak, action: 'flag' } },
    stop,
  };
}

/**
 * What auto-save sends: every step whose values the server's schema accepts as typed (the
 * spec's limits are checked per step on Continue); a number out of the stored bounds is
 * left out rather than failing the whole save.
 */
export function savable(d: DraftForm): ExperimentConfig {
  const c = toConfig(d);
  const stop = { ...(c.stop ?? {}) };
  const inRange = (v: unknown, lo: number, hi: number, int = false) => typeof v === 'number' && Number.isFinite(v) && v >= lo && v <= hi && (!int || Number.isInteger(v));
  if (!inRange(stop.max_iterations, 1, 100, true)) delete stop.max_iterations;
  if (!inRange(stop.min_delta, 0, 1)) delete stop.min_delta;
  if (!inRange(stop.convergence_window, 1, 10, true)) delete stop.convergence_window;
  if (!inRange(stop.budget_alert_threshold, 0.5, 1)) delete stop.budget_alert_threshold;
  if (stop.max_total_tokens !== null && !inRange(stop.max_total_tokens, 0, 10_000_000, true)) delete stop.max_total_tokens;
  if (!inRange(stop.max_budget_micros, 0, 10_000_000_000, true)) delete stop.max_budget_micros;
  const data = { ...(c.data ?? {}) };
  if (!inRange(data.holdout_fraction, 0, 0.5)) delete data.holdout_fraction;
  const rubric = { criteria: d.rubric.map((x) => ({ name: x.name.slice(0, 50), description: x.description.slice(0, 500), weight: inRange(x.weight, 0, 1) ? x.weight : 0, scale: { min: x.scale_min, max: x.scale_max } })) };
  return { ...c, stop, data, rubric };
}

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown, dflt = '') => (typeof v === 'string' ? v : dflt);
const num = (v: unknown, dflt: number) => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);
const numOrNull = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The server's configuration (possibly partial: a draft) → the form. */
export function fromConfig(c: ExperimentConfig, name = ''): DraftForm {
  const d = emptyDraft();
  const rubric = arr(obj(c.rubric).criteria).map((x) => {
    const o = obj(x);
    const scale = obj(o.scale);
    return { name: str(o.name), description: str(o.description), weight: num(o.weight, 0), scale_min: num(scale.min, 0), scale_max: num(scale.max, 5) };
  });
  const p = obj(c.prompt);
  const data = obj(c.data);
  const models = obj(c.models);
  const targets = arr(models.targets).map(obj);
  const grid = obj(targets[0]?.grid);
  const judges = obj(c.judges);
  const safety = obj(judges.safety);
  const stop = obj(c.stop);
  const tools = arr(p.tools);
  return {
    ...d,
    name,
    objective: str(obj(c.objective).goal),
    rubric: rubric.length ? rubric : d.rubric,
    prompt_text: str(p.template),
    system_text: str(p.system),
    few_shots: arr(p.few_shots).map((x) => ({ user: str(obj(x).input), assistant: str(obj(x).output) })),
    tools_schema: tools.length ? JSON.stringify(tools, null, 2) : '',
    dataset_version_id: numOrNull(data.dataset_version_id),
    holdout_fraction: num(data.holdout_fraction, d.holdout_fraction),
    targets: targets.map((o) => {
      const params = obj(o.params);
      return { model_config_id: num(o.model_id, 0), temperature: num(params.temperature, 1), max_tokens: num(params.max_tokens, 4096) };
    }),
    grid_temperatures: arr(grid.temperature).filter((x): x is number => typeof x === 'number'),
    grid_max_tokens: arr(grid.max_tokens).filter((x): x is number => typeof x === 'number'),
    judge_model_ids: arr(judges.pointwise).filter((x): x is number => typeof x === 'number'),
    pairwise: judges.pairwise === true,
    refiner_id: numOrNull(judges.refiner),
    safety_pii: safety.pii !== false,
    safety_jailbreak: safety.jailbreak !== false,
    max_iterations: num(stop.max_iterations, d.max_iterations),
    min_delta: num(stop.min_delta, d.min_delta),
    convergence_window: num(stop.convergence_window, d.convergence_window),
    max_spend_dollars: typeof stop.max_budget_micros === 'number' ? microsToDollars(stop.max_budget_micros) : d.max_spend_dollars,
    budget_alert: num(stop.budget_alert_threshold, d.budget_alert),
    max_tokens_total: numOrNull(stop.max_total_tokens),
    max_rejections: num(stop.max_rejections, d.max_rejections),
  };
}
