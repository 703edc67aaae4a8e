// The results grid (issue 7): GET .../runs/{run_id}/grid pages cases (rows) with one cell
// per target; manual scores are saved through PUT/DELETE .../outputs/{id}/scores/{version}.
import { api, unwrap } from '@/api/client';
import { ifMatch } from '@/api/errors';
import type { paths } from '@/api/schema';
import { request } from '@/features/datasets/api';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type GridPath = '/api/projects/{project_id}/runs/{run_id}/grid';
type ScorePath = '/api/projects/{project_id}/runs/{run_id}/outputs/{output_id}/scores/{scorer_version_id}';
type ScorersPath = '/api/projects/{project_id}/scorers';

export type GridPage = Json<paths[GridPath]['get']['responses'][200]>;
export type GridRow = GridPage['rows'][number];
export type GridCell = GridRow['cells'][number];
export type GridOutput = GridCell['outputs'][number];
export type GridScore = GridOutput['scores'][number];
export type GridTarget = GridPage['targets'][number];
export type GridQueryArgs = NonNullable<paths[GridPath]['get']['parameters']['query']>;
export type ManualScoreBody = NonNullable<paths[ScorePath]['put']['requestBody']>['content']['application/json'];
export type Scorer = Json<paths[ScorersPath]['get']['responses'][200]>['items'][number];

export type Sort = NonNullable<GridQueryArgs['sort']>;
export type Verdict = NonNullable<GridQueryArgs['verdict']>;

/** What the user picked in the filter bar; '' means no filter. */
export interface GridFilters {
  sort: Sort;
  order: 'asc' | 'desc';
  sortTargetId: number | null;
  targetIds: number[];
  scorerId: number | null;
  scoreMin: string;
  scoreMax: string;
  verdict: Verdict | '';
  status: NonNullable<GridQueryArgs['status']> | '';
  errorClass: string;
  tag: string;
}

export const NO_FILTERS: GridFilters = {
  sort: 'position',
  order: 'asc',
  sortTargetId: null,
  targetIds: [],
  scorerId: null,
  scoreMin: '',
  scoreMax: '',
  verdict: '',
  status: '',
  errorClass: '',
  tag: '',
};

/** A bound of the score range as 0..1, null when empty; NaN when it is not a number in range. */
export function parseBound(text: string): number | null {
  if (!text.trim()) return null;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : Number.NaN;
}

/** The filters' problem the server would refuse, said before asking it. */
export function filterProblem(f: GridFilters): string | null {
  const low = parseBound(f.scoreMin);
  const high = parseBound(f.scoreMax);
  if (Number.isNaN(low) || Number.isNaN(high)) return 'Scores run from 0 to 1.';
  if (low !== null && high !== null && low > high) return 'The lowest score is above the highest.';
  return null;
}

export function gridQuery(f: GridFilters, offset: number, limit: number): Record<string, string | number> {
  const q: Record<string, string | number> = { offset, limit, sort: f.sort, order: f.order };
  if (f.sortTargetId !== null) q.sort_target_id = f.sortTargetId;
  if (f.targetIds.length) q.target_ids = f.targetIds.join(',');
  if (f.scorerId !== null) q.scorer_id = f.scorerId;
  const low = parseBound(f.scoreMin);
  const high = parseBound(f.scoreMax);
  if (!filterProblem(f)) {
    if (low !== null) q.score_min = low;
    if (high !== null) q.score_max = high;
  }
  if (f.verdict) q.verdict = f.verdict;
  if (f.status) q.status = f.status;
  if (f.errorClass.trim()) q.error_class = f.errorClass.trim();
  if (f.tag.trim()) q.tag = f.tag.trim();
  return q;
}

export const gridPath = (projectId: number, runId: number) => `/api/projects/${projectId}/runs/${runId}/grid`;

export function fetchGrid(projectId: number, runId: number, query: Record<string, string | number>, signal?: AbortSignal) {
  return request<GridPage>('GET', gridPath(projectId, runId), { query, signal });
}

/** `based` is the row_version of the reviewer's score there (0: none yet; undefined: unknown, no check). */
export function putScore(projectId: number, runId: number, outputId: number, versionId: number, body: ManualScoreBody, based?: number) {
  return unwrap(
    api.PUT(ScoreUrl, {
      params: { path: { project_id: projectId, run_id: runId, output_id: outputId, scorer_version_id: versionId } },
      body,
      headers: ifMatch(based),
    }),
  );
}

export function deleteScore(projectId: number, runId: number, outputId: number, versionId: number, based?: number) {
  return unwrap(
    api.DELETE(ScoreUrl, {
      params: { path: { project_id: projectId, run_id: runId, output_id: outputId, scorer_version_id: versionId } },
      headers: ifMatch(based),
    }),
  );
}

const ScoreUrl: ScorePath = '/api/projects/{project_id}/runs/{run_id}/outputs/{output_id}/scores/{scorer_version_id}';

export function fetchManualScorers(projectId: number, signal?: AbortSignal) {
  return request<{ items: Scorer[]; total: number }>('GET', `/api/projects/${projectId}/scorers`, {
    query: { kind: 'manual', page_size: 100 },
    signal,
  });
}

/** The case's side-by-side page (built in another part of issue 7). */
export const casePath = (projectId: number, runId: number, caseId: number) => `/projects/${projectId}/runs/${runId}/cases/${caseId}`;
export const resultsPath = (projectId: number, runId: number) => `/projects/${projectId}/runs/${runId}/results`;
export const reviewPath = (projectId: number, runId: number) => `/projects/${projectId}/runs/${runId}/review`;

export const formatScore = (value: number | null | undefined) => (value === null || value === undefined ? '—' : value.toFixed(2));
