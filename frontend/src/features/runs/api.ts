// Runs (issue 5): the run engine's HTTP contract (/work/notes/issue5-contract.md).
// Request helper shared with the datasets feature (same CSRF and ApiError handling).
import { request } from '@/features/datasets/api';
import type { RunStatus } from '@/api/types';
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type OneRun = '/api/projects/{project_id}/runs/{run_id}';

// Every type below comes from the generated OpenAPI paths.
export type Progress = Json<paths[`${OneRun}/progress`]['get']['responses'][200]>;
export type TargetProgress = Progress['targets'][number];
export type Output = Json<paths[`${OneRun}/outputs`]['get']['responses'][200]>['items'][number];
export type CellStatus = Output['status'];
export type OutputDetail = Json<paths[`${OneRun}/outputs/{output_id}`]['get']['responses'][200]>;
export type RunSummary = Json<paths[`${OneRun}/summary`]['get']['responses'][200]>;
export type TargetSummary = RunSummary['targets'][number];

export { request };
export type { RunStatus };

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Runs = '/api/projects/{project_id}/runs';
type Prompts = '/api/projects/{project_id}/prompts';

export type Run = Json<paths[OneRun]['get']['responses'][200]>;
export type RunTarget = Run['targets'][number];
export type RunSettings = Run['settings'];
export type RunCreateBody = Body<paths[Runs]['post']>;
export type RunTargetBody = RunCreateBody['targets'][number];
export type Params = NonNullable<RunTargetBody['params']>;
export type Grid = NonNullable<RunTargetBody['grid']>;
export type RunEstimate = Json<paths[`${Runs}/estimate`]['post']['responses'][200]>;
export type TargetEstimate = RunEstimate['per_target'][number];
/** One reason a run cannot start (the estimate's `problems`, the 422's errors.reasons). */
export type RunProblem = RunEstimate['problems'][number];
export type ReasonCode = RunProblem['code'];
export type Prompt = Json<paths[Prompts]['get']['responses'][200]>['items'][number];
export type PromptVersion = Json<paths[`${Prompts}/{prompt_id}/versions`]['get']['responses'][200]>['items'][number];

export type RunAction = 'pause' | 'resume' | 'cancel' | 'retry-failed';

export const runsPath = (projectId: number) => `/api/projects/${projectId}/runs`;
export const runPath = (projectId: number, runId: number) => `${runsPath(projectId)}/${runId}`;
export const promptsPath = (projectId: number) => `/api/projects/${projectId}/prompts`;

/** A list endpoint's items, whether it answers with a page or a bare array. */
export function itemsOf<T>(r: Page<T> | T[] | null | undefined): T[] {
  if (!r) return [];
  return Array.isArray(r) ? r : r.items;
}

/** The reasons of a RUN_NOT_READY 422 (errors.reasons), or [] for any other error. */
export function notReadyReasons(e: unknown): RunProblem[] {
  if (typeof e !== 'object' || e === null || !('errors' in e)) return [];
  const errors = (e as { errors: unknown }).errors;
  if (typeof errors !== 'object' || errors === null) return [];
  const reasons = (errors as { reasons?: unknown }).reasons;
  if (!Array.isArray(reasons)) return [];
  return reasons.filter(
    (r): r is RunProblem => typeof r === 'object' && r !== null && typeof (r as RunProblem).message === 'string',
  );
}
