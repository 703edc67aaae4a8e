// Datasets, cases, versions, import, export and coverage (issue 4): types derived from the
// generated OpenAPI paths (`@/api/schema`), like `@/api/providerTypes`.
import { currentCsrfToken, CSRF_HEADER } from '@/api/client';
import { networkError, toApiError } from '@/api/errors';
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type DatasetsPaths = paths['/api/projects/{project_id}/datasets'];
type One = '/api/projects/{project_id}/datasets/{dataset_id}';

export type Dataset = Json<DatasetsPaths['get']['responses'][200]>['items'][number];
export type DatasetKind = Dataset['kind'];
export const DATASET_KINDS: readonly DatasetKind[] = ['questions', 'cases', 'conversations', 'traces'];
export const DIFFICULTIES: readonly Difficulty[] = ['easy', 'medium', 'hard'];

export const KIND_LABELS: Record<DatasetKind, string> = {
  questions: 'Questions',
  cases: 'Cases',
  conversations: 'Conversations',
  traces: 'Traces',
};


export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export type JsonObject = Record<string, unknown>;

export type Case = Json<paths['/api/projects/{project_id}/datasets/{dataset_id}/cases']['get']['responses'][200]>['items'][number];

export type CaseBody = Body<paths['/api/projects/{project_id}/datasets/{dataset_id}/cases']['post']>;

/** The body of adding several cases at once: each a case without the version's note. */
export type CasesBody = Body<paths['/api/projects/{project_id}/datasets/{dataset_id}/cases/bulk']['post']>;

export type DatasetVersion = Json<paths['/api/projects/{project_id}/datasets/{dataset_id}/versions']['get']['responses'][200]>['items'][number];

export type DatasetDiff = Json<paths['/api/projects/{project_id}/datasets/{dataset_id}/diff']['get']['responses'][200]>;
export type DatasetCreateBody = Body<DatasetsPaths['post']>;
export type Difficulty = NonNullable<Case['difficulty']>;

export type Coverage = Json<paths[`${One}/coverage`]['get']['responses'][200]>;
export type Bucket = Coverage['by_tag'][number];


export type ImportFormat = 'csv' | 'jsonl';

export type ImportPreview = Json<paths[`${One}/import/preview`]['post']['responses'][200]>;

/** The file as the import endpoints take it: base64 of its bytes, so the server checks the encoding. */
export type ImportSource = Body<paths[`${One}/import/preview`]['post']>;

export function importFormat(filename: string): ImportFormat | null {
  if (/\.csv$/i.test(filename)) return 'csv';
  if (/\.(jsonl|ndjson)$/i.test(filename)) return 'jsonl';
  return null;
}

async function fileBytes(file: Blob): Promise<ArrayBuffer> {
  if (typeof file.arrayBuffer === 'function') return file.arrayBuffer();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as ArrayBuffer);
    reader.onerror = () => reject(reader.error);
    reader.readAsArrayBuffer(file);
  });
}

export async function importSource(file: File): Promise<ImportSource> {
  const bytes = new Uint8Array(await fileBytes(file));
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { format: importFormat(file.name) ?? 'csv', content: btoa(binary), base64: true };
}

/** A column name as a template variable name (letters, digits and _, not first a digit). */
export function variableName(column: string): string {
  const v = column.trim().replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return !v ? 'var' : /^[0-9]/.test(v) ? `_${v}`.slice(0, 64) : v;
}

export type ColumnRole = 'variable' | 'expected' | 'tags' | 'difficulty' | 'metadata' | 'ignore';

export type ImportBody = Body<paths[`${One}/import`]['post']>;
export type ImportMapping = NonNullable<ImportBody['mapping']>;

export interface RowError {
  row: number;
  field: string;
  reason: string;
}

type Query = Record<string, string | number | boolean | null | undefined>;

export function apiUrl(path: string, query: Query = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    qs.set(k, String(v));
  }
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

/** A JSON request with the same CSRF and error handling as `@/api/client`. */
export async function request<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  { query, body, signal, headers: extra }: { query?: Query; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<T> {
  const headers = new Headers({ Accept: 'application/json', ...extra });
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers.set('Content-Type', 'application/json');
    payload = JSON.stringify(body);
  }
  if (method !== 'GET') {
    const token = currentCsrfToken();
    if (token) headers.set(CSRF_HEADER, token);
  }
  const origin = typeof window !== 'undefined' && window.location ? window.location.origin : 'http://localhost';
  let response: Response;
  try {
    response = await globalThis.fetch(
      new Request(new URL(apiUrl(path, query), origin), { method, headers, body: payload, signal, credentials: 'same-origin' }),
    );
  } catch (e) {
    if (signal?.aborted) throw e;
    throw networkError();
  }
  const text = await response.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  if (!response.ok) throw toApiError(response.status, data);
  return data as T;
}

export const datasetsPath = (projectId: number) => `/api/projects/${projectId}/datasets`;
export const datasetPath = (projectId: number, datasetId: number) => `${datasetsPath(projectId)}/${datasetId}`;
/** A version's export: the server streams the file and names it (Content-Disposition). */
export const exportUrl = (projectId: number, datasetId: number, format: 'csv' | 'jsonl', version?: number) =>
  apiUrl(`${datasetPath(projectId, datasetId)}/export`, { format, version });

/** Per-row import errors from a 422, wherever the server put the list. */
export function rowErrors(errors: unknown): RowError[] {
  const isRow = (x: unknown): x is RowError =>
    typeof x === 'object' && x !== null && 'row' in x && ('reason' in x || 'field' in x);
  if (Array.isArray(errors)) return errors.filter(isRow);
  if (typeof errors === 'object' && errors !== null) {
    for (const key of ['errors', 'rows', 'json', 'form']) {
      const inner = (errors as Record<string, unknown>)[key];
      const found = rowErrors(inner);
      if (found.length) return found;
    }
  }
  return [];
}

/** A one-line summary of a case for the table. */
export function caseSummary(c: Pick<Case, 'input' | 'trace'>): string {
  const input: JsonObject = c.input ?? {}; // its shape depends on the dataset's kind
  for (const key of ['question', 'prompt', 'text', 'query']) {
    const v = input[key];
    if (typeof v === 'string') return v;
  }
  const messages = input.messages ?? c.trace?.messages;
  if (Array.isArray(messages) && messages.length) {
    const users = messages.filter((m) => (m as JsonObject)?.role === 'user');
    const first = (users[0] ?? messages[0]) as JsonObject;
    const content = first?.content;
    const label = c.trace ? `${messages.length} message${messages.length === 1 ? '' : 's'}` : `${users.length} turn${users.length === 1 ? '' : 's'}`;
    return `${label}: ${typeof content === 'string' ? content : JSON.stringify(first)}`;
  }
  const values = Object.values(input);
  if (values.length && values.every((v) => typeof v === 'string')) return Object.entries(input).map(([k, v]) => `${k}: ${v}`).join(' · ');
  const s = JSON.stringify(input);
  return s === '{}' && c.trace ? 'Recorded trace' : s;
}

export function expectedSummary(expected: JsonObject | null): string {
  if (!expected) return '—';
  for (const key of ['answer', 'output', 'text', 'expected']) {
    const v = expected[key];
    if (typeof v === 'string') return v;
  }
  if (Array.isArray(expected.turns)) return expected.turns.map((t) => (typeof t === 'string' ? t : JSON.stringify(t))).join(' | ');
  return JSON.stringify(expected);
}
