// Scoring a run: the project's scorers to pick from, scorers added to a finished run (with
// their estimate and the job's live progress) and pairwise judging of two targets.
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '@/api/schema';
import { qk } from '@/api/queryKeys';
import { request, runPath, type Page } from '../api';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Scorers = '/api/projects/{project_id}/scorers';
type OneRun = '/api/projects/{project_id}/runs/{run_id}';

export type Scorer = Json<paths[Scorers]['get']['responses'][200]>['items'][number];
export type ScorerDetail = Json<paths[`${Scorers}/{scorer_id}`]['get']['responses'][200]>;
export type ScorerVersion = ScorerDetail['versions'][number];
export type AttachEstimate = Json<paths[`${OneRun}/scorers/estimate`]['post']['responses'][200]>;
export type ScoringStarted = Json<paths[`${OneRun}/scorers`]['post']['responses'][202]>;
export type ComparisonStarted = Json<paths[`${OneRun}/comparisons`]['post']['responses'][202]>;
export type ComparisonSummary = Json<paths[`${OneRun}/comparisons/summary`]['get']['responses'][200]>;

/** Kinds that compare two outputs instead of scoring one (pairwise judging, not scorers of a run). */
export const PAIR_KINDS = ['pairwise_judge'];
/** Kinds people score by hand: they cost nothing and the scoring job leaves them to reviewers. */
export const HUMAN_KINDS = ['manual'];
export const SCORERS_PAGE_SIZE = 100;

export const scorersPath = (projectId: number) => `/api/projects/${projectId}/scorers`;
export const scorersUrl = (projectId: number) => `/projects/${projectId}/scorers`;

/** One picked scorer: at its latest version (versionId null) or at a chosen one. */
export interface ScorerPick {
  scorerId: number;
  versionId: number | null;
}

const keys = {
  scorers: (projectId: number) => [...qk.project(projectId), 'scorers', 'active'] as const,
  scorer: (projectId: number, scorerId: number) => [...qk.project(projectId), 'scorers', 'one', scorerId] as const,
  comparisons: (projectId: number, runId: number) => [...qk.run(projectId, runId), 'comparisons'] as const,
  // Against a base run (null: between the run's own targets); a prefix of `comparisons`, so invalidating that refreshes both.
  summary: (projectId: number, runId: number, baseRunId: number | null) =>
    [...qk.run(projectId, runId), 'comparisons', 'summary', baseRunId] as const,
};

/** The project's scorers that are not archived (the first 100, by the API's order). */
export function useActiveScorers(projectId: number) {
  return useQuery({
    queryKey: keys.scorers(projectId),
    queryFn: ({ signal }) =>
      request<Page<Scorer>>('GET', scorersPath(projectId), { query: { page: 1, page_size: SCORERS_PAGE_SIZE }, signal }),
  });
}

/** One scorer with every version (newest first), loaded when a version is to be chosen. */
export function useScorerDetail(projectId: number, scorerId: number, enabled = true) {
  return useQuery({
    queryKey: keys.scorer(projectId, scorerId),
    queryFn: ({ signal }) => request<ScorerDetail>('GET', `${scorersPath(projectId)}/${scorerId}`, { signal }),
    enabled,
  });
}

/** What adding these versions to the run would cost; refetched as the choice changes. */
export function useAttachEstimate(projectId: number, runId: number, versionIds: number[]) {
  return useQuery({
    queryKey: [...qk.run(projectId, runId), 'scorers-estimate', versionIds] as const,
    queryFn: ({ signal }) =>
      request<AttachEstimate>('POST', `${runPath(projectId, runId)}/scorers/estimate`, {
        body: { scorer_version_ids: versionIds },
        signal,
      }),
    enabled: versionIds.length > 0,
    placeholderData: keepPreviousData,
    retry: false,
  });
}

export function useAttachScorers(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (versionIds: number[]) =>
      request<ScoringStarted>('POST', `${runPath(projectId, runId)}/scorers`, { body: { scorer_version_ids: versionIds } }),
    onSuccess: (started) => queryClient.setQueryData(qk.run(projectId, runId), started.run),
  });
}

export function useStartComparisons(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (
      body: { scorer_id: number; target_a_id: number } & ({ target_b_id: number } | { base_run_id: number; base_target_id: number }),
    ) =>
      request<ComparisonStarted>('POST', `${runPath(projectId, runId)}/comparisons`, { body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.comparisons(projectId, runId) }),
  });
}

/**
 * The run's comparisons summed up (ratings with intervals, position bias): between its own targets, or against
 * `baseRunId`'s targets when given; polled every pollMs while `pollWhile` holds.
 */
export function useComparisonSummary(
  projectId: number,
  runId: number,
  pollMs: number,
  pollWhile: (data: ComparisonSummary | undefined) => boolean,
  baseRunId: number | null = null,
) {
  return useQuery({
    queryKey: keys.summary(projectId, runId, baseRunId),
    queryFn: ({ signal }) =>
      request<ComparisonSummary>('GET', `${runPath(projectId, runId)}/comparisons/summary`, {
        query: baseRunId === null ? undefined : { base_run_id: baseRunId },
        signal,
      }),
    refetchInterval: (query) => (pollWhile(query.state.data) ? pollMs : false),
  });
}
