/**
 * The wizard's working copy of an experiment draft. The server holds the draft (auto-saved
 * with a debounced PATCH); this is the form's shape, mapped to and from the API in api.ts.
 */
export interface Criterion {
  name: string;
  description: string;
  weight: number;
  scale_min: number;
  scale_max: number;
}

export interface FewShot {
  user: string;
  assistant: string;
}

export interface TargetDraft {
  model_config_id: number;
  temperature: number;
  max_tokens: number;
}

export interface DraftForm {
  name: string;
  objective: string;
  rubric: Criterion[];
  prompt_text: string;
  system_text: string;
  few_shots: FewShot[];
  tools_schema: string;
  dataset_id: number | null;
  dataset_version_id: number | null;
  targets: TargetDraft[];
  grid_temperatures: number[];
  grid_max_tokens: number[];
  judge_model_ids: number[];
  pairwise: boolean;
  refiner_id: number | null;
  safety_pii: boolean;
  safety_jailbreak: boolean;
  max_iterations: number;
  min_delta: number;
  convergence_window: number;
  max_spend_dollars: string;
  budget_alert: number;
  max_tokens_total: number | null;
  max_rejections: number;
  holdout_fraction: number;
}

export const SCALES: Array<[number, number]> = [
  [0, 1],
  [0, 3],
  [0, 5],
  [0, 10],
  [0, 100],
];

export const emptyCriterion = (): Criterion => ({ name: '', description: '', weight: 0, scale_min: 0, scale_max: 5 });

export function emptyDraft(): DraftForm {
  return {
    name: '',
    objective: '',
    rubric: [emptyCriterion(), emptyCriterion()],
    prompt_text: '',
    system_text: '',
    few_shots: [],
    tools_schema: '',
    dataset_id: null,
    dataset_version_id: null,
    targets: [],
    grid_temperatures: [],
    grid_max_tokens: [],
    judge_model_ids: [],
    pairwise: false,
    refiner_id: null,
    safety_pii: true,
    safety_jailbreak: true,
    max_iterations: 10,
    min_delta: 0.02,
    convergence_window: 3,
    max_spend_dollars: '100',
    budget_alert: 0.8,
    max_tokens_total: null,
    max_rejections: 3,
    holdout_fraction: 0.3,
  };
}

/** The `{{variables}}` of a prompt, in order of first use. */
export function detectVariables(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)) seen.add(m[1]);
  return [...seen];
}

/** Equal weights that sum to exactly 1 (the last criterion takes the rounding remainder). */
export function normalizeWeights(rubric: Criterion[]): Criterion[] {
  if (rubric.length === 0) return rubric;
  const each = Math.floor((1 / rubric.length) * 100) / 100;
  return rubric.map((c, i) => ({
    ...c,
    weight: i === rubric.length - 1 ? Math.round((1 - each * (rubric.length - 1)) * 100) / 100 : each,
  }));
}

export const weightSum = (rubric: Criterion[]) => Math.round(rubric.reduce((s, c) => s + (Number(c.weight) || 0), 0) * 1000) / 1000;

/** Targets × parameter combinations: what one iteration runs per case. */
export function gridSize(d: DraftForm): number {
  const t = Math.max(1, d.grid_temperatures.length);
  const m = Math.max(1, d.grid_max_tokens.length);
  return d.targets.length * t * m;
}
