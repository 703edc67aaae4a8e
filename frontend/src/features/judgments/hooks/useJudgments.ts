import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import type { JudgmentCreateBody } from '../api';

export const JUDGMENTS_PAGE_SIZE = 20;
export const JUDGINGS_PAGE_SIZE = 10;
/** While judges are still rating, the page is read again this often (the run itself is
 * complete at once, so its event stream ends before the ratings land). */
export const SCORING_POLL_MS = 2000;

const judgmentsKey = (projectId: number, runId: number, page: number) => ['project', projectId, 'judgments', 'run', runId, page] as const;
const judgingsKey = (projectId: number, datasetId: number, page: number) => ['project', projectId, 'judgments', 'dataset', datasetId, page] as const;

/** One page of a judge-mode run's judgments; polls until every rating has landed. */
export function useJudgments(projectId: number, runId: number, page: number) {
  return useQuery({
    queryKey: judgmentsKey(projectId, runId, page),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/runs/{run_id}/judgments', {
          params: { path: { project_id: projectId, run_id: runId }, query: { page, page_size: JUDGMENTS_PAGE_SIZE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data && !query.state.data.progress.done ? SCORING_POLL_MS : false),
  });
}

/** The dataset's judge-mode runs, newest first. */
export function useDatasetJudgings(projectId: number, datasetId: number, page: number) {
  return useQuery({
    queryKey: judgingsKey(projectId, datasetId, page),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/datasets/{dataset_id}/judgments', {
          params: { path: { project_id: projectId, dataset_id: datasetId }, query: { page, page_size: JUDGINGS_PAGE_SIZE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useStartJudging(projectId: number, datasetId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: JudgmentCreateBody) =>
      unwrap(
        api.POST('/api/projects/{project_id}/datasets/{dataset_id}/judgments', {
          params: { path: { project_id: projectId, dataset_id: datasetId } },
          body,
        }),
      ),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['project', projectId, 'judgments', 'dataset', datasetId] });
      void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
    },
  });
}
