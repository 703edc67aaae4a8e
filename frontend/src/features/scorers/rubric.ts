/** A rubric as the llm_judge and pairwise_judge kinds take it (backend scorers/rubric.py). */
export interface Criterion {
  name: string;
  description: string;
  /** A number, or the text typed while it is not one yet (the server refuses it). */
  weight: number | string;
  /** "1-5", or as stored through the API: {min, max, labels?} (kept whole until changed). */
  scale: string | ScaleObject;
}

export interface ScaleObject {
  min: number;
  max: number;
  labels?: Record<string, string>;
}

/** A scale as the picker shows it: "0-10". */
export function scaleText(scale: Criterion['scale']): string {
  return typeof scale === 'string' ? scale : `${scale.min}-${scale.max}`;
}

export interface Rubric {
  criteria: Criterion[];
  goal?: string;
}

/** The scales the server allows, as it writes them. */
export const SCALES = ['0-1', '0-3', '0-5', '0-10', '0-100', '1-5', '1-10'] as const;
export const MIN_CRITERIA = 2;
export const MAX_CRITERIA = 10;
/** The server accepts weights summing to 1 within this tolerance. */
export const WEIGHT_TOLERANCE = 0.01;

/** The sum of the weights that are numbers, rounded to hide float noise (0.1 + 0.2). */
export function weightSum(criteria: Criterion[]): number {
  const sum = criteria.reduce((total, c) => total + (typeof c.weight === 'number' && Number.isFinite(c.weight) ? c.weight : 0), 0);
  return Math.round(sum * 1e6) / 1e6;
}

/** Whether every weight is a number and they sum to 1 as the server requires. */
export function weightsBalanced(criteria: Criterion[]): boolean {
  return criteria.every((c) => typeof c.weight === 'number') && Math.abs(weightSum(criteria) - 1) <= WEIGHT_TOLERANCE + 1e-9;
}

/** Equal weights summing to exactly 1 (the last takes the rounding remainder). */
export function evenWeights(criteria: Criterion[]): Criterion[] {
  const n = criteria.length;
  if (n === 0) return criteria;
  const each = Math.floor((1 / n) * 100) / 100;
  return criteria.map((c, i) => ({ ...c, weight: i === n - 1 ? Math.round((1 - each * (n - 1)) * 100) / 100 : each }));
}

export function newCriterion(): Criterion {
  return { name: '', description: '', weight: 0, scale: '1-5' };
}

export function starterRubric(): Rubric {
  return {
    criteria: [
      { name: 'Accuracy', description: 'The answer is factually correct.', weight: 0.5, scale: '1-5' },
      { name: 'Clarity', description: 'The answer is clear and easy to follow.', weight: 0.5, scale: '1-5' },
    ],
  };
}

/** A rubric as stored params may hold it (a scale may be an object there). */
export function asRubric(value: unknown): Rubric | null {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as Rubric).criteria)) return null;
  const raw = value as { criteria: Record<string, unknown>[]; goal?: unknown };
  return {
    criteria: raw.criteria.map((c) => ({
      name: String(c.name ?? ''),
      description: String(c.description ?? ''),
      weight: typeof c.weight === 'number' ? c.weight : String(c.weight ?? ''),
      scale: typeof c.scale === 'object' && c.scale !== null ? (c.scale as ScaleObject) : String(c.scale ?? '1-5'),
    })),
    ...(typeof raw.goal === 'string' ? { goal: raw.goal } : {}),
  };
}
