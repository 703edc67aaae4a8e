import { parseDollars } from '@/lib/money';
import { detectVariables, weightSum, type DraftForm } from './draft';

/** The wizard's seven steps (FR-EC-001…007), in order. */
export const STEPS = [
  { key: 'objective', title: 'Objective' },
  { key: 'rubric', title: 'Rubric' },
  { key: 'prompt', title: 'Seed prompt' },
  { key: 'data', title: 'Test data' },
  { key: 'models', title: 'Models & parameters' },
  { key: 'judges', title: 'Judges & safety' },
  { key: 'stop', title: 'Stop rules & budget' },
] as const;
export type StepKey = (typeof STEPS)[number]['key'];

export type FieldErrors = Record<string, string>;

const NAME_RE = /^[a-zA-Z0-9 ]+$/;

/** Client-side checks of one step, keyed by the form's field paths (e.g. `rubric.1.weight`). */
export function validateStep(step: StepKey, d: DraftForm): FieldErrors {
  const e: FieldErrors = {};
  switch (step) {
    case 'objective': {
      const n = d.objective.trim().length;
      if (n < 20) e.objective = 'The objective must be at least 20 characters.';
      else if (n > 2000) e.objective = 'The objective must be at most 2,000 characters.';
      if (d.name.trim().length > 200) e.name = 'The name must be at most 200 characters.';
      break;
    }
    case 'rubric': {
      if (d.rubric.length < 2) e.rubric = 'Add at least 2 criteria.';
      if (d.rubric.length > 10) e.rubric = 'Use at most 10 criteria.';
      const names = new Set<string>();
      d.rubric.forEach((c, i) => {
        const name = c.name.trim();
        if (!name || name.length > 50) e[`rubric.${i}.name`] = 'A name of 1–50 characters.';
        else if (!NAME_RE.test(name)) e[`rubric.${i}.name`] = 'Letters, digits and spaces only.';
        else if (names.has(name.toLowerCase())) e[`rubric.${i}.name`] = 'Two criteria have this name.';
        names.add(name.toLowerCase());
        const dl = c.description.trim().length;
        if (dl < 10 || dl > 500) e[`rubric.${i}.description`] = 'A description of 10–500 characters.';
        if (!(c.weight >= 0 && c.weight <= 1)) e[`rubric.${i}.weight`] = 'A weight between 0 and 1.';
      });
      if (!e.rubric && Math.abs(weightSum(d.rubric) - 1) > 0.01) e.rubric = `Weights must sum to 1.0 (now ${weightSum(d.rubric).toFixed(2)}).`;
      break;
    }
    case 'prompt': {
      const n = d.prompt_text.length;
      if (n < 50) e.prompt_text = 'The prompt must be at least 50 characters.';
      else if (n > 20000) e.prompt_text = 'The prompt must be at most 20,000 characters.';
      if (d.system_text.length > 5000) e.system_text = 'The system message must be at most 5,000 characters.';
      if (d.few_shots.length > 10) e.few_shots = 'At most 10 few-shot examples.';
      d.few_shots.forEach((f, i) => {
        if (!f.user.trim() || !f.assistant.trim()) e[`few_shots.${i}`] = 'Both the user and the assistant turn are needed.';
      });
      if (d.tools_schema.trim()) {
        try {
          const parsed: unknown = JSON.parse(d.tools_schema);
          if (typeof parsed !== 'object' || parsed === null) e.tools_schema = 'Tool definitions must be a JSON object or array.';
        } catch {
          e.tools_schema = 'Tool definitions are not valid JSON.';
        }
      }
      break;
    }
    case 'data':
      if (d.dataset_version_id === null) e.dataset_version_id = 'Pick, import or generate a dataset version.';
      break;
    case 'models':
      if (d.targets.length < 1) e.targets = 'Select at least one model.';
      if (d.targets.length > 10) e.targets = 'At most 10 model configurations.';
      d.targets.forEach((t, i) => {
        if (!(t.temperature >= 0 && t.temperature <= 2)) e[`targets.${i}.temperature`] = 'Temperature is between 0 and 2.';
        if (!(Number.isInteger(t.max_tokens) && t.max_tokens >= 1 && t.max_tokens <= 100000))
          e[`targets.${i}.max_tokens`] = 'Max tokens is a whole number from 1 to 100,000.';
      });
      if (d.grid_temperatures.some((t) => !(t >= 0 && t <= 2))) e.grid_temperatures = 'Each temperature is between 0 and 2.';
      if (d.grid_max_tokens.some((t) => !(Number.isInteger(t) && t >= 1 && t <= 100000))) e.grid_max_tokens = 'Each max tokens is from 1 to 100,000.';
      break;
    case 'judges':
      if (d.judge_model_ids.length < 1) e.judge_model_ids = 'Select at least one judge model.';
      break;
    case 'stop': {
      if (!(Number.isInteger(d.max_iterations) && d.max_iterations >= 1 && d.max_iterations <= 100)) e.max_iterations = 'From 1 to 100 iterations.';
      if (!(d.min_delta >= 0 && d.min_delta <= 1)) e.min_delta = 'A minimum improvement between 0 and 1.';
      if (!(Number.isInteger(d.convergence_window) && d.convergence_window >= 1 && d.convergence_window <= 10)) e.convergence_window = 'From 1 to 10 iterations.';
      const spend = parseDollars(d.max_spend_dollars);
      if (!spend.ok) e.max_spend_dollars = spend.error;
      else if (spend.micros === null) e.max_spend_dollars = 'Set a maximum spend.';
      else if (spend.micros > 10_000 * 1_000_000) e.max_spend_dollars = 'At most $10,000.';
      if (!(d.budget_alert >= 0.5 && d.budget_alert <= 1)) e.budget_alert = 'An alert between 50% and 100%.';
      if (d.max_tokens_total !== null && !(Number.isInteger(d.max_tokens_total) && d.max_tokens_total >= 0 && d.max_tokens_total <= 10_000_000))
        e.max_tokens_total = 'From 0 to 10,000,000 tokens.';
      if (!(Number.isInteger(d.max_rejections) && d.max_rejections >= 1 && d.max_rejections <= 20)) e.max_rejections = 'From 1 to 20 rejections.';
      if (!(d.holdout_fraction >= 0 && d.holdout_fraction <= 0.5)) e.holdout_fraction = 'A held-out share between 0% and 50%.';
      break;
    }
  }
  return e;
}

/** Which step owns a field path (client or server spelling); null when none does. */
export function stepOfField(path: string): StepKey | null {
  const head = path.split('.')[0];
  const owners: Record<string, StepKey> = {
    name: 'objective',
    objective: 'objective',
    rubric: 'rubric',
    criteria: 'rubric',
    prompt_text: 'prompt',
    seed_prompt: 'prompt',
    seed: 'prompt',
    system_text: 'prompt',
    few_shots: 'prompt',
    tools_schema: 'prompt',
    template: 'prompt',
    dataset_version_id: 'data',
    dataset: 'data',
    targets: 'models',
    models: 'models',
    param_grid: 'models',
    grid_temperatures: 'models',
    grid_max_tokens: 'models',
    judges: 'judges',
    judge_model_ids: 'judges',
    pairwise: 'judges',
    safety: 'judges',
    stop_rules: 'stop',
    budget_micros: 'stop',
    max_spend_micros: 'stop',
    max_iterations: 'stop',
    min_delta: 'stop',
    convergence_window: 'stop',
    max_spend_dollars: 'stop',
    max_tokens_total: 'stop',
    holdout_fraction: 'stop',
    max_rejections: 'stop',
  };
  return owners[head] ?? null;
}

/** The first step (in wizard order) that has an error, for jumping there after a failed start. */
export function firstStepWithError(errors: FieldErrors): number | null {
  const steps = new Set(Object.keys(errors).map(stepOfField));
  const i = STEPS.findIndex((s) => steps.has(s.key));
  return i < 0 ? null : i;
}

/** The errors that belong to one step. */
export function errorsForStep(step: StepKey, errors: FieldErrors): FieldErrors {
  return Object.fromEntries(Object.entries(errors).filter(([k]) => stepOfField(k) === step));
}

export { detectVariables };

const STOP_FIELDS: Record<string, string> = {
  max_budget_micros: 'max_spend_dollars',
  budget_alert_threshold: 'budget_alert',
  max_total_tokens: 'max_tokens_total',
};

/**
 * A server field path (the step-keyed configuration, e.g. `rubric.criteria[1].weight` or
 * marshmallow's `rubric.criteria.1.weight`) → the form's path (`rubric.1.weight`), so the
 * error shows under its field.
 */
export function formPath(serverPath: string): string {
  const parts = serverPath.replace(/\[(\d+)\]/g, '.$1').split('.');
  if (parts[0] === 'config') parts.shift();
  const [step, field, ...rest] = parts;
  switch (step) {
    case 'objective':
      return 'objective';
    case 'name':
      return 'name';
    case 'rubric':
      if (field === 'criteria' && rest.length >= 1) {
        const [i, f] = rest;
        return f ? `rubric.${i}.${f === 'scale' ? 'weight' : f}` : `rubric.${i}.name`;
      }
      return 'rubric';
    case 'prompt':
      if (field === 'template' || field === undefined) return 'prompt_text';
      if (field === 'system') return 'system_text';
      if (field === 'few_shots') return rest.length ? `few_shots.${rest[0]}` : 'few_shots';
      if (field === 'tools') return 'tools_schema';
      return 'prompt_text';
    case 'data':
      return field === 'holdout_fraction' ? 'holdout_fraction' : 'dataset_version_id';
    case 'models':
      if (field === 'targets' && rest.length >= 1) {
        const f = rest[rest.length - 1];
        if (rest[1] === 'grid') return f === 'max_tokens' ? 'grid_max_tokens' : 'grid_temperatures';
        return f === 'temperature' || f === 'max_tokens' ? `targets.${rest[0]}.${f}` : 'targets';
      }
      return 'targets';
    case 'judges':
      return 'judge_model_ids';
    case 'stop':
      return field ? (STOP_FIELDS[field] ?? field) : 'max_iterations';
    default:
      return serverPath;
  }
}

/** Server field errors keyed by form paths (the first message wins per field). */
export function mapServerErrors(errors: Record<string, string>): FieldErrors {
  const out: FieldErrors = {};
  for (const [k, v] of Object.entries(errors)) {
    const p = formPath(k);
    if (!(p in out)) out[p] = v;
  }
  return out;
}
