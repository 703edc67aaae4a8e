import type { ModelParams } from '@/api/providerTypes';

/**
 * Default generation parameters and the client-side hints for them. They mirror the
 * server's rules per provider, but the server's 422 is authoritative.
 */
export const PARAM_NAMES = ['temperature', 'max_tokens', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed', 'stop'] as const;
export type ParamName = (typeof PARAM_NAMES)[number];

export type ParamForm = Record<ParamName, string>;

export const emptyParams: ParamForm = {
  temperature: '',
  max_tokens: '',
  top_p: '',
  frequency_penalty: '',
  presence_penalty: '',
  seed: '',
  stop: '',
};

export const MAX_STOP = 4;

export interface ParamRule {
  label: string;
  supported: boolean;
  kind: 'number' | 'integer' | 'lines';
  min?: number;
  max?: number;
  hint: string;
}

export const PARAM_LABELS: Record<ParamName, string> = {
  temperature: 'Temperature',
  max_tokens: 'Max tokens',
  top_p: 'Top p',
  frequency_penalty: 'Frequency penalty',
  presence_penalty: 'Presence penalty',
  seed: 'Seed',
  stop: 'Stop sequences',
};

/** The rules for a provider kind ("anthropic" differs; every other kind speaks OpenAI's dialect). */
export function paramRules(provider: string | undefined): Record<ParamName, ParamRule> {
  const anthropic = provider === 'anthropic';
  const notAnthropic = 'Not supported by Anthropic.';
  return {
    temperature: {
      label: PARAM_LABELS.temperature,
      supported: true,
      kind: 'number',
      min: 0,
      max: anthropic ? 1 : 2,
      hint: anthropic ? 'From 0 to 1 for Anthropic.' : 'From 0 to 2.',
    },
    max_tokens: { label: PARAM_LABELS.max_tokens, supported: true, kind: 'integer', min: 1, hint: 'A whole number, at least 1.' },
    top_p: { label: PARAM_LABELS.top_p, supported: true, kind: 'number', min: 0, max: 1, hint: 'From 0 to 1.' },
    frequency_penalty: {
      label: PARAM_LABELS.frequency_penalty,
      supported: !anthropic,
      kind: 'number',
      min: -2,
      max: 2,
      hint: anthropic ? notAnthropic : 'From -2 to 2.',
    },
    presence_penalty: {
      label: PARAM_LABELS.presence_penalty,
      supported: !anthropic,
      kind: 'number',
      min: -2,
      max: 2,
      hint: anthropic ? notAnthropic : 'From -2 to 2.',
    },
    seed: { label: PARAM_LABELS.seed, supported: !anthropic, kind: 'integer', hint: anthropic ? notAnthropic : 'A whole number, for reproducible sampling where the provider supports it.' },
    stop: { label: PARAM_LABELS.stop, supported: true, kind: 'lines', hint: `One per line, at most ${MAX_STOP}.` },
  };
}

const NUMBER_RE = /^-?(\d+\.?\d*|\.\d+)$/;
const INTEGER_RE = /^-?\d+$/;

function stopLines(text: string): string[] {
  return text.split('\n').map((s) => s.replace(/\r$/, '')).filter((s) => s.length > 0);
}

export interface ParamCheck {
  /** Fields that cannot be sent at all (not a number): block the submit. */
  errors: Partial<Record<ParamName, string>>;
  /** Out of the provider's range or unsupported by it: shown as hints, sent anyway (the server decides). */
  warnings: Partial<Record<ParamName, string>>;
  params: ModelParams;
}

/** Checks the parameter fields and builds the params to send. */
export function validateParams(provider: string | undefined, form: ParamForm): ParamCheck {
  const rules = paramRules(provider);
  const errors: ParamCheck['errors'] = {};
  const warnings: ParamCheck['warnings'] = {};
  const params: ModelParams = {};
  for (const name of PARAM_NAMES) {
    const rule = rules[name];
    if (name === 'stop') {
      const lines = stopLines(form.stop);
      if (lines.length === 0) continue;
      if (lines.length > MAX_STOP) warnings.stop = `At most ${MAX_STOP} stop sequences.`;
      params.stop = lines;
      continue;
    }
    const raw = form[name].trim();
    if (raw === '') continue;
    const re = rule.kind === 'integer' ? INTEGER_RE : NUMBER_RE;
    if (!re.test(raw)) {
      errors[name] = rule.kind === 'integer' ? 'Enter a whole number.' : 'Enter a number.';
      continue;
    }
    const value = Number(raw);
    if (rule.kind === 'integer' && !Number.isSafeInteger(value)) {
      errors[name] = 'That number is too large.';
      continue;
    }
    (params as Record<string, number>)[name] = value;
    if (!rule.supported) warnings[name] = rule.hint;
    else if ((rule.min !== undefined && value < rule.min) || (rule.max !== undefined && value > rule.max)) {
      warnings[name] =
        rule.max === undefined ? `Must be at least ${rule.min}.` : `Must be between ${rule.min} and ${rule.max}.`;
    }
  }
  return { errors, warnings, params };
}

/** The saved params as form fields. */
export function paramsToForm(params: ModelParams | null | undefined): ParamForm {
  const f: ParamForm = { ...emptyParams };
  if (!params) return f;
  for (const name of PARAM_NAMES) {
    const v = params[name];
    if (v === null || v === undefined) continue;
    f[name] = Array.isArray(v) ? v.join('\n') : String(v);
  }
  return f;
}
