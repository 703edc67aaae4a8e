// Generation jobs and documents (issue 4 §3): types derived from the generated OpenAPI paths.
import type { paths } from '@/api/schema';
import type { JsonObject } from '@/features/datasets/api';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Gen = '/api/projects/{project_id}/generation';

export type QuestionsRequest = Body<paths[`${Gen}/questions`]['post']>;
export type CasesRequest = Body<paths[`${Gen}/cases`]['post']>;
export type ConversationsRequest = Body<paths[`${Gen}/conversations`]['post']>;
export type GenerationRequest = QuestionsRequest | CasesRequest | ConversationsRequest;
export type GenerationEstimate = Json<paths[`${Gen}/questions/estimate`]['post']['responses'][200]>;
export type GenerationJob = Json<paths[`${Gen}/{job_id}`]['get']['responses'][200]>;
export type GenerationKind = GenerationJob['kind'];
export type JobSummaryPage = Json<paths[Gen]['get']['responses'][200]>;
export type JobSummary = JobSummaryPage['items'][number];
export type JobStatus = GenerationJob['status'];
export type Accepted = Json<paths[`${Gen}/{job_id}/accept`]['post']['responses'][201]>;
export type AcceptBody = Body<paths[`${Gen}/{job_id}/accept`]['post']>;

export const GENERATION_KINDS: readonly GenerationKind[] = ['questions', 'cases', 'conversations'];
export const TERMINAL_JOB: readonly JobStatus[] = ['succeeded', 'partial', 'failed', 'cancelled'];
/** Finished with items to review and accept (a partial job has fewer than asked). */
export const REVIEWABLE_JOB: readonly JobStatus[] = ['succeeded', 'partial', 'cancelled'];

export type DocumentPage = Json<paths['/api/projects/{project_id}/documents']['get']['responses'][200]>;
export type DocumentInfo = DocumentPage['items'][number];

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
