// Reports (issue 7, part 5): typed reads of the project and run report endpoints.
import { request } from '@/features/datasets/api';
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Get<P extends keyof paths> = paths[P] extends { get: { responses: { 200: infer R } } } ? Json<R> : never;

type Reports = '/api/projects/{project_id}/reports';
type OneRun = '/api/projects/{project_id}/runs/{run_id}';

export type Leaderboard = Get<`${Reports}/leaderboard`>;
export type LeaderboardRow = Leaderboard['items'][number];
export type CostReport = Get<`${Reports}/costs`>;
export type TokenUsage = Get<`${Reports}/tokens`>;
export type ScoreTrend = Get<`${Reports}/trend`>;
export type QuestionQuality = Get<`${Reports}/question-quality`>;
export type RunStatistics = Get<`${OneRun}/statistics`>;
export type TargetStatistics = RunStatistics['items'][number];
export type RunFacets = Get<`${OneRun}/statistics/facets`>;
export type ComparisonSummary = Get<`${OneRun}/comparisons/summary`>;
export type RunView = Get<OneRun>;
export type RagSummary = Get<`${Reports}/rag`>;
export type JudgeCalibration = Get<`${Reports}/judge-calibration`>;
export type ProjectRatings = Get<`${Reports}/ratings`>;
export type RunDashboard = Get<`${Reports}/runs/{run_id}/dashboard`>;
export type TargetComparison = Get<`${OneRun}/compare-targets`>;
export type ScorerPage = Get<'/api/projects/{project_id}/scorers'>;
export type ScorerCoverage = Get<`${Reports}/scorers`>;
export type Scorer = ScorerPage['items'][number];
export type RunPage = Get<'/api/projects/{project_id}/runs'>;
export type RunItem = RunPage['items'][number];

/** A mean with its interval, as every report spells it. */
export interface Interval {
  mean: number | null;
  low: number | null;
  high: number | null;
}

export type Versions = 'all' | 'latest';
/** What a project report covers: a dataset, and the first and last UTC day (YYYY-MM-DD). */
export interface Scope {
  dataset_id?: number;
  date_from?: string;
  date_to?: string;
}
export type DatasetPage = Get<'/api/projects/{project_id}/datasets'>;
export type FacetKind = 'by_tag' | 'by_length' | 'by_difficulty';

const reports = (projectId: number) => `/api/projects/${projectId}/reports`;
const run = (projectId: number, runId: number) => `/api/projects/${projectId}/runs/${runId}`;

export const reportsApi = {
  leaderboard: (projectId: number, scorerId: number | null, versions: Versions, scope: Scope = {}) =>
    request<Leaderboard>('GET', `${reports(projectId)}/leaderboard`, {
      query: { scorer_id: scorerId ?? undefined, versions, ...scope },
    }),
  costs: (projectId: number, scope: Scope = {}) => request<CostReport>('GET', `${reports(projectId)}/costs`, { query: { ...scope } }),
  tokens: (projectId: number, scope: Scope = {}) => request<TokenUsage>('GET', `${reports(projectId)}/tokens`, { query: { ...scope } }),
  trend: (projectId: number, scorerId: number | null, scope: Scope = {}) =>
    request<ScoreTrend>('GET', `${reports(projectId)}/trend`, { query: { scorer_id: scorerId ?? undefined, ...scope } }),
  datasets: (projectId: number) => request<DatasetPage>('GET', `/api/projects/${projectId}/datasets`, { query: { page_size: 100 } }),
  questionQuality: (projectId: number) => request<QuestionQuality>('GET', `${reports(projectId)}/question-quality`),
  statistics: (projectId: number, runId: number) => request<RunStatistics>('GET', `${run(projectId, runId)}/statistics`),
  facets: (projectId: number, runId: number, versionId: number) =>
    request<RunFacets>('GET', `${run(projectId, runId)}/statistics/facets`, { query: { scorer_version_id: versionId } }),
  comparisons: (projectId: number, runId: number) =>
    request<ComparisonSummary>('GET', `${run(projectId, runId)}/comparisons/summary`),
  scorerCoverage: (projectId: number) => request<ScorerCoverage>('GET', `${reports(projectId)}/scorers`),
  ratings: (projectId: number, scorerId: number | null, scope: Scope = {}) =>
    request<ProjectRatings>('GET', `${reports(projectId)}/ratings`, { query: { scorer_id: scorerId ?? undefined, ...scope } }),
  calibration: (projectId: number) => request<JudgeCalibration>('GET', `${reports(projectId)}/judge-calibration`),
  rag: (projectId: number, scorerId: number | null, scope: Scope = {}) =>
    request<RagSummary>('GET', `${reports(projectId)}/rag`, { query: { scorer_id: scorerId ?? undefined, ...scope } }),
  run: (projectId: number, runId: number) => request<RunView>('GET', run(projectId, runId)),
  dashboard: (projectId: number, runId: number, scorerId: number | null) =>
    request<RunDashboard>('GET', `${reports(projectId)}/runs/${runId}/dashboard`, { query: { scorer_id: scorerId ?? undefined } }),
  compareTargets: (projectId: number, runId: number, targetA: number, targetB: number, versionId: number) =>
    request<TargetComparison>('GET', `${run(projectId, runId)}/compare-targets`, {
      query: { target_a: targetA, target_b: targetB, scorer_version_id: versionId },
    }),
  scorers: (projectId: number) =>
    request<ScorerPage>('GET', `/api/projects/${projectId}/scorers`, { query: { page_size: 100 } }),
  runs: (projectId: number) => request<RunPage>('GET', `/api/projects/${projectId}/runs`, { query: { page_size: 100 } }),
};

/** Scorers that give each output its own score (a pairwise judge ranks pairs instead). */
export const POINTWISE = (s: Scorer) => s.kind !== 'pairwise_judge';
