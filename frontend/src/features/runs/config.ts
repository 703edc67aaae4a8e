// The run configuration form: its state, the parameter grid and the RunCreate body it builds.
import { parseDollars } from '@/lib/money';
import { emptyParams, validateParams, type ParamForm, type ParamName } from '@/features/models/params';
import type { Params, RunCreateBody, RunTargetBody } from './api';
import type { ScorerPick } from './scoring/api';
import { DEFAULT_RAG_TEMPLATE, RAG_DOCUMENTS_MAX, RAG_TEMPLATE_MAX, RAG_TOP_K_DEFAULT, RAG_TOP_K_MAX } from './rag/context';

export const MAX_TARGETS = 20; // before the grid expands
export const MAX_EXPANDED_TARGETS = 50;
export const REPEATS_MAX = 10;
export const CONCURRENCY_MAX = 1000;
export const HISTORY_MAX = 50;
export const TIMEOUT_MAX = 3600;
export const RETRIES_MAX = 10;

/** The parameters a grid row can vary, and whether their values are whole numbers. */
export const GRID_PARAMS: ReadonlyArray<{ name: ParamName; integer: boolean }> = [
  { name: 'temperature', integer: false },
  { name: 'max_tokens', integer: true },
  { name: 'top_p', integer: false },
  { name: 'frequency_penalty', integer: false },
  { name: 'presence_penalty', integer: false },
  { name: 'seed', integer: true },
];

export interface GridRow {
  key: string;
  param: ParamName;
  /** Comma-separated values as typed: "0.2, 0.7, 1". */
  values: string;
}

export interface TargetForm {
  key: string;
  modelId: number;
  params: ParamForm;
  grid: GridRow[];
  promptId: number | null;
  promptVersionId: number | null;
}

export interface RunForm {
  name: string;
  datasetId: number | null;
  /** null: the dataset's latest version. */
  versionId: number | null;
  targets: TargetForm[];
  repeats: string;
  concurrency: string;
  maxHistoryPairs: string;
  cache: boolean;
  stream: boolean;
  timeout: string;
  /** '' : the project's default. */
  maxRetries: string;
  budget: string;
  alertPercent: string;
  /** Scorers the run pins: at their latest version, or at a chosen one. */
  scorers: ScorerPick[];
  /** "Answer from documents": sent as `rag` only when on. */
  rag: RagForm;
}

export interface RagForm {
  enabled: boolean;
  documentIds: number[];
  topK: string;
  template: string;
}

export const initialRunForm: RunForm = {
  name: '',
  datasetId: null,
  versionId: null,
  targets: [],
  repeats: '1',
  concurrency: '',
  maxHistoryPairs: '10',
  cache: true,
  stream: false,
  timeout: '',
  maxRetries: '',
  budget: '',
  alertPercent: '80',
  scorers: [],
  rag: { enabled: false, documentIds: [], topK: String(RAG_TOP_K_DEFAULT), template: DEFAULT_RAG_TEMPLATE },
};

let seq = 0;
export const nextKey = (prefix: string) => `${prefix}-${++seq}`;

export function newTarget(modelId: number, from?: TargetForm): TargetForm {
  return {
    key: nextKey('t'),
    modelId,
    params: { ...emptyParams },
    grid: [],
    promptId: from?.promptId ?? null,
    promptVersionId: from?.promptVersionId ?? null,
  };
}

const NUMBER_RE = /^-?(\d+\.?\d*|\.\d+)$/;
const INTEGER_RE = /^-?\d+$/;

export type GridValues = { ok: true; values: number[] } | { ok: false; error: string };

/** "0.2, 0.7,1" → [0.2, 0.7, 1]; empty parts are skipped, duplicates dropped. */
export function parseGridValues(param: ParamName, text: string): GridValues {
  const integer = GRID_PARAMS.find((p) => p.name === param)?.integer ?? false;
  const parts = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) return { ok: false, error: 'Enter one or more values, separated by commas.' };
  const values: number[] = [];
  for (const part of parts) {
    if (!(integer ? INTEGER_RE : NUMBER_RE).test(part)) {
      return { ok: false, error: `"${part}" is not ${integer ? 'a whole number' : 'a number'}.` };
    }
    const v = Number(part);
    if (!values.includes(v)) values.push(v);
  }
  return { ok: true, values };
}

/** How many targets one configured model expands into (the product of its grid rows). */
export function combinations(target: Pick<TargetForm, 'grid'>): number {
  let n = 1;
  for (const row of target.grid) {
    const parsed = parseGridValues(row.param, row.values);
    if (parsed.ok) n *= parsed.values.length;
  }
  return n;
}

export function expandedTargetCount(targets: ReadonlyArray<Pick<TargetForm, 'grid'>>): number {
  return targets.reduce((sum, t) => sum + combinations(t), 0);
}

/** "3 targets × 12 cases × 2 repeats = 72 calls". */
export function callsLine(targets: number, cases: number, repeats: number): string {
  const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  return `${plural(targets, 'target', 'targets')} × ${plural(cases, 'case', 'cases')} × ${plural(repeats, 'repeat', 'repeats')} = ${plural(targets * cases * repeats, 'call', 'calls')}`;
}

function wholeNumber(text: string, min: number, max: number): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n >= min && n <= max ? n : null;
}

/** A percentage typed by the user as the fraction the API takes: "80" → 0.8, "7.5" → 0.075. */
export function percentToFraction(text: string): number | null {
  const t = text.trim().replace(/%$/, '').trim();
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  // Basis points as an integer, then one division: no binary drift beyond the literal's.
  const bp = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (bp < 500 || bp > 10_000) return null;
  return Number((bp / 10_000).toFixed(4));
}

export type FormErrors = Partial<Record<string, string>>;

export interface BuildOptions {
  /** Dataset kind: traces take no targets; conversations use max_history_pairs. */
  kind?: string;
  /** Provider per model id, for the parameter checks. */
  providerOf?: (modelId: number) => string | undefined;
}

/** Checks the form and builds the RunCreate body (the same body goes to /estimate and to create). */
/** A scorer picked at its latest version goes in scorer_ids, one at a chosen version in scorer_version_ids. */
function scorerFields(picks: ScorerPick[]): Pick<RunCreateBody, 'scorer_ids' | 'scorer_version_ids'> {
  const latest = picks.filter((p) => p.versionId === null).map((p) => p.scorerId);
  const chosen = picks.flatMap((p) => (p.versionId === null ? [] : [p.versionId]));
  return { ...(latest.length ? { scorer_ids: latest } : {}), ...(chosen.length ? { scorer_version_ids: chosen } : {}) };
}

export function buildRunBody(form: RunForm, options: BuildOptions = {}): { body: RunCreateBody | null; errors: FormErrors } {
  const errors: FormErrors = {};
  if (form.datasetId === null) errors.dataset = 'Choose a dataset.';
  const traces = options.kind === 'traces';
  const targets: RunTargetBody[] = [];
  if (!traces) {
    if (form.targets.length === 0) errors.targets = 'Add at least one model.';
    if (form.targets.length > MAX_TARGETS) errors.targets = `At most ${MAX_TARGETS} models.`;
    for (const t of form.targets) {
      const check = validateParams(options.providerOf?.(t.modelId), t.params);
      for (const [name, message] of Object.entries(check.errors)) errors[`${t.key}.${name}`] = message;
      const grid: Record<string, number[]> = {};
      for (const row of t.grid) {
        const parsed = parseGridValues(row.param, row.values);
        if (!parsed.ok) errors[`${row.key}`] = parsed.error;
        else if (row.param in grid) errors[`${row.key}`] = 'This parameter already has a variation.';
        else grid[row.param] = parsed.values;
      }
      const body: RunTargetBody = { model_id: t.modelId, params: check.params as Params };
      if (t.promptVersionId !== null) body.prompt_version_id = t.promptVersionId;
      if (Object.keys(grid).length > 0) body.grid = grid;
      targets.push(body);
    }
    const expanded = expandedTargetCount(form.targets);
    if (!errors.targets && expanded > MAX_EXPANDED_TARGETS) {
      errors.targets = `The grid expands into ${expanded} targets; at most ${MAX_EXPANDED_TARGETS}.`;
    }
  }
  const repeats = wholeNumber(form.repeats, 1, REPEATS_MAX);
  if (repeats === null) errors.repeats = `A whole number from 1 to ${REPEATS_MAX}.`;
  let concurrency: number | null = null;
  if (form.concurrency.trim()) {
    concurrency = wholeNumber(form.concurrency, 1, CONCURRENCY_MAX);
    if (concurrency === null) errors.concurrency = `A whole number from 1 to ${CONCURRENCY_MAX}, or empty for the default.`;
  }
  const history = wholeNumber(form.maxHistoryPairs, 1, HISTORY_MAX);
  if (history === null) errors.maxHistoryPairs = `A whole number from 1 to ${HISTORY_MAX}.`;
  let timeout: number | null = null;
  if (form.timeout.trim()) {
    timeout = wholeNumber(form.timeout, 1, TIMEOUT_MAX);
    if (timeout === null) errors.timeout = `Seconds, a whole number from 1 to ${TIMEOUT_MAX}, or empty for the default.`;
  }
  let maxRetries: number | null = null;
  if (form.maxRetries.trim()) {
    maxRetries = wholeNumber(form.maxRetries, 0, RETRIES_MAX);
    if (maxRetries === null) errors.maxRetries = `A whole number from 0 to ${RETRIES_MAX}, or empty for the project's default.`;
  }
  const budget = parseDollars(form.budget);
  if (!budget.ok) errors.budget = budget.error.replace('a price', 'an amount');
  else if (budget.micros === 0) errors.budget = 'A budget must be more than $0 (leave it empty for no cap).';
  const alert = percentToFraction(form.alertPercent);
  if (alert === null) errors.alertPercent = 'A percentage from 5 to 100.';

  // A traces dataset's outputs are recorded: nothing to answer from documents.
  const rag = form.rag.enabled && !traces ? ragBody(form.rag, errors) : null;

  if (Object.keys(errors).length > 0 || form.datasetId === null) return { body: null, errors };
  const name = form.name.trim();
  return {
    errors,
    body: {
      name: name || null,
      dataset_id: form.datasetId,
      dataset_version_id: form.versionId,
      targets,
      repeats: repeats!,
      concurrency,
      cache: form.cache,
      stream: form.stream,
      timeout_s: timeout,
      max_retries: maxRetries,
      max_history_pairs: history!,
      budget_micros: budget.ok ? budget.micros : null,
      alert_threshold: alert!,
      ...scorerFields(form.scorers),
      ...(rag ? { rag } : {}),
    },
  };
}

/** The `rag` body, with the API's checks (errors keyed as the API's 422 names them: rag.top_k…). */
function ragBody(rag: RagForm, errors: FormErrors): NonNullable<RunCreateBody['rag']> | null {
  if (rag.documentIds.length === 0) errors['rag.document_ids'] = 'Choose at least one document.';
  else if (rag.documentIds.length > RAG_DOCUMENTS_MAX) errors['rag.document_ids'] = `At most ${RAG_DOCUMENTS_MAX} documents.`;
  const topK = wholeNumber(rag.topK, 1, RAG_TOP_K_MAX);
  if (topK === null) errors['rag.top_k'] = `A whole number from 1 to ${RAG_TOP_K_MAX}.`;
  const template = rag.template;
  const missing = ['context', 'question'].filter((n) => !new RegExp(`\\{\\{\\s*${n}\\s*\\}\\}`).test(template)).map((n) => `{{${n}}}`);
  if (!template.trim()) errors['rag.template'] = 'Write a template (it must hold {{context}} and {{question}}).';
  else if (template.length > RAG_TEMPLATE_MAX) errors['rag.template'] = `At most ${RAG_TEMPLATE_MAX.toLocaleString('en-US')} characters.`;
  else if (missing.length) errors['rag.template'] = `The template must hold ${missing.join(' and ')}.`;
  if (topK === null || errors['rag.document_ids'] || errors['rag.template']) return null;
  return { document_ids: rag.documentIds, top_k: topK, template };
}
