// Generation jobs (issue 4 §3). Shapes follow backend/assay/api/generation/schemas.py;
// replace with types derived from `@/api/schema` once openapi.json lists these paths.
import type { JsonObject } from '@/features/datasets/api';

export const GENERATION_KINDS = ['questions', 'cases', 'conversations'] as const;
export type GenerationKind = (typeof GENERATION_KINDS)[number];
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export const TERMINAL_JOB: readonly JobStatus[] = ['succeeded', 'failed'];

export interface QuestionsRequest {
  model_id: number;
  count: number;
  topic: string;
  instructions?: string | null;
  type_tags?: string[];
  difficulty?: string | null;
  max_cost_micros?: number | null;
}

export interface CasesRequest {
  model_id: number;
  count: number;
  diversity: number;
  domain_hints?: string | null;
  variables: string[];
  include_edge_cases: boolean;
  max_cost_micros?: number | null;
}

export interface ConversationsRequest {
  model_id: number;
  document_id: number;
  count: number;
  turns: number;
  max_cost_micros?: number | null;
}

export type GenerationRequest = QuestionsRequest | CasesRequest | ConversationsRequest;

export interface GenerationEstimate {
  model_id: number;
  calls: number;
  input_tokens: number;
  output_tokens_low: number;
  output_tokens_high: number;
  low_micros: number | null;
  high_micros: number | null;
  priced: boolean;
  warnings: string[];
}

export interface GenerationJob {
  id: number;
  kind: GenerationKind;
  status: JobStatus;
  model_id: number;
  requested: number;
  received: number;
  batches: number;
  batches_done: number;
  cost_micros: number | null;
  tokens_in: number;
  tokens_out: number;
  estimate: { calls: number; low_micros: number | null; high_micros: number | null; priced: boolean };
  error: string | null;
  dataset_ids: number[];
  created_at: string;
  finished_at: string | null;
  spec?: JsonObject;
  items: JsonObject[];
  warnings: string[];
}

export interface Accepted {
  dataset_id: number;
  name: string;
  kind: string;
  cases: number;
}

export interface DocumentInfo {
  id: number;
  name: string;
  mime?: string;
  size_bytes?: number;
  pages?: number | null;
  created_at?: string;
}

export const GENERATION_EVENTS = ['generation.started', 'generation.progress', 'generation.finished'] as const;

export interface GenerationEvent {
  type: (typeof GENERATION_EVENTS)[number];
  job_id: number;
  status: JobStatus;
  batches: number;
  batches_done: number;
  requested: number;
  received: number;
  cost_micros: number | null;
}

export const generationPath = (projectId: number) => `/api/projects/${projectId}/generation`;
export const jobPath = (projectId: number, jobId: number) => `${generationPath(projectId)}/${jobId}`;
export const documentsPath = (projectId: number) => `/api/projects/${projectId}/documents`;

export function parseGenerationEvent(ev: MessageEvent): GenerationEvent | null {
  try {
    const data = JSON.parse(String(ev.data)) as Partial<GenerationEvent>;
    if (typeof data !== 'object' || data === null) return null;
    const type = (GENERATION_EVENTS as readonly string[]).includes(ev.type) ? (ev.type as GenerationEvent['type']) : data.type;
    if (!type || !(GENERATION_EVENTS as readonly string[]).includes(type)) return null;
    return { ...data, type } as GenerationEvent;
  } catch {
    return null;
  }
}

/** The text of one preview item, whatever its kind. */
export function itemText(kind: GenerationKind, item: JsonObject): { title: string; detail: string } {
  const s = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
  if (kind === 'questions') return { title: s(item.question), detail: s(item.answer) };
  if (kind === 'cases') {
    const input = (item.input ?? {}) as JsonObject;
    const title = Object.entries(input).map(([k, v]) => `${k}: ${s(v)}`).join(' · ');
    const expected = item.expected as JsonObject | string | null | undefined;
    const detail = typeof expected === 'object' && expected ? s(expected.output ?? expected) : s(expected);
    return { title: title || s(item), detail };
  }
  const turns = Array.isArray(item.turns) ? (item.turns as JsonObject[]) : [];
  return {
    title: turns.length ? `${turns.length} turn${turns.length === 1 ? '' : 's'}: ${s(turns[0]?.question)}` : s(item),
    detail: turns.map((t) => s(t.ground_truth)).filter(Boolean).join(' | '),
  };
}
