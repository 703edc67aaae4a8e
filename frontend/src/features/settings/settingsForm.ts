import type { paths } from '@/api/schema';
import { microsToDollars, parseDollars } from '@/lib/money';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
export type ProjectSettings = Json<paths['/api/projects/{project_id}/settings']['get']['responses'][200]>;
export type SettingsPatch = NonNullable<paths['/api/projects/{project_id}/settings']['patch']['requestBody']>['content']['application/json'];

export const CONCURRENCY_MAX = 1000;
export const TIMEOUT_MAX = 3600;
export const RETRIES_MAX = 10;
/** The server's ceiling on a money setting (MAX_MICROS): a billion dollars. */
export const MONEY_MAX_MICROS = 10 ** 15;

/** What the form edits: text as typed, so a bad value stays on screen with its error. */
export interface SettingsForm {
  name: string;
  description: string;
  budget: string; // dollars; '' = no cap
  alertPercent: string;
  concurrency: string; // '' = the server's default
  timeout: string;
  maxRetries: string;
  codeExecution: boolean;
  arenaAllowance: string; // dollars; '' = none: only editors and up run paid EvalArena judges
}

export type SettingsErrors = Partial<Record<keyof SettingsForm, string>>;

export function formOf(s: ProjectSettings): SettingsForm {
  const text = (n: number | null) => (n === null ? '' : String(n));
  return {
    name: s.name,
    description: s.description ?? '',
    budget: microsToDollars(s.budget_micros),
    alertPercent: String(Math.round(s.alert_threshold * 10000) / 100),
    concurrency: text(s.default_concurrency),
    timeout: text(s.default_timeout_s),
    maxRetries: text(s.default_max_retries),
    codeExecution: s.code_execution,
    arenaAllowance: microsToDollars(s.arena_allowance_micros),
  };
}

function optionalWhole(text: string, min: number, max: number): { ok: boolean; value: number | null } {
  const t = text.trim();
  if (t === '') return { ok: true, value: null };
  if (!/^\d+$/.test(t)) return { ok: false, value: null };
  const n = Number(t);
  return n >= min && n <= max ? { ok: true, value: n } : { ok: false, value: null };
}

/** The PATCH body of what changed from `saved`, or the field errors that block saving. */
export function buildPatch(form: SettingsForm, saved: ProjectSettings): { patch: SettingsPatch | null; errors: SettingsErrors } {
  const errors: SettingsErrors = {};
  const name = form.name.trim();
  if (!name) errors.name = 'A project needs a name.';
  else if (name.length > 100) errors.name = 'At most 100 characters.';
  if (form.description.length > 1000) errors.description = 'At most 1000 characters.';
  const budget = parseDollars(form.budget);
  if (form.budget.trim().startsWith('-')) errors.budget = 'A budget cannot be negative.';
  else if (!budget.ok) errors.budget = budget.error.replace('a price', 'an amount');
  const percent = form.alertPercent.trim();
  const alert = /^\d+(\.\d+)?$/.test(percent) ? Number(percent) : NaN;
  if (!(alert > 0 && alert <= 100)) errors.alertPercent = 'A percentage more than 0 and at most 100.';
  const concurrency = optionalWhole(form.concurrency, 1, CONCURRENCY_MAX);
  if (!concurrency.ok) errors.concurrency = `A whole number from 1 to ${CONCURRENCY_MAX}, or empty for the server's default.`;
  const timeout = optionalWhole(form.timeout, 1, TIMEOUT_MAX);
  if (!timeout.ok) errors.timeout = `Seconds, a whole number from 1 to ${TIMEOUT_MAX}, or empty for the server's default.`;
  const retries = optionalWhole(form.maxRetries, 0, RETRIES_MAX);
  if (!retries.ok) errors.maxRetries = `A whole number from 0 to ${RETRIES_MAX}, or empty for the default (2).`;
  const allowance = parseDollars(form.arenaAllowance);
  if (form.arenaAllowance.trim().startsWith('-')) errors.arenaAllowance = 'An allowance cannot be negative.';
  else if (!allowance.ok) errors.arenaAllowance = allowance.error.replace('a price', 'an amount').replace('That price', 'That amount');
  else if (allowance.micros !== null && allowance.micros > MONEY_MAX_MICROS) errors.arenaAllowance = 'At most $1,000,000,000.';
  if (Object.keys(errors).length > 0) return { patch: null, errors };

  const next: SettingsPatch = {
    name,
    description: form.description.trim() || null,
    budget_micros: budget.ok ? budget.micros : null,
    alert_threshold: Math.round(alert * 100) / 10000,
    default_concurrency: concurrency.value,
    default_timeout_s: timeout.value,
    default_max_retries: retries.value,
    code_execution: form.codeExecution,
    arena_allowance_micros: allowance.ok ? allowance.micros : null,
  };
  const patch: SettingsPatch = {};
  for (const key of Object.keys(next) as (keyof SettingsPatch)[]) {
    if (next[key] !== saved[key]) (patch as Record<string, unknown>)[key] = next[key];
  }
  return { patch, errors };
}

/** Server field names back onto the form's. */
export const SERVER_FIELDS: Record<string, keyof SettingsForm> = {
  name: 'name',
  description: 'description',
  budget_micros: 'budget',
  alert_threshold: 'alertPercent',
  default_concurrency: 'concurrency',
  default_timeout_s: 'timeout',
  default_max_retries: 'maxRetries',
  code_execution: 'codeExecution',
  arena_allowance_micros: 'arenaAllowance',
};
