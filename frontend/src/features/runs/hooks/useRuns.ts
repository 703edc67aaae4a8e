import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import { isTerminal } from '@/api/types';
import type { RunEstimateBody } from '@/api/providerTypes';

export const RUNS_PAGE_SIZE = 20;
export const OUTPUTS_PAGE_SIZE = 50;

export function useRuns(projectId: number, page = 1) {
  return useQuery({
    queryKey: qk.runs(projectId, page),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/runs', {
          params: { path: { project_id: projectId }, query: { page, page_size: RUNS_PAGE_SIZE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** One run; with pollMs it polls while the run is not finished (a fallback when the live stream is down). */
export function useRun(projectId: number, runId: number, options: { pollMs?: number | false } = {}) {
  const pollMs = options.pollMs ?? false;
  return useQuery({
    queryKey: qk.run(projectId, runId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/runs/{run_id}', {
          params: { path: { project_id: projectId, run_id: runId } },
          signal,
        }),
      ),
    refetchInterval: (query) => (pollMs && !isTerminal(query.state.data?.status) ? pollMs : false),
  });
}

export function useOutputs(projectId: number, runId: number, page = 1) {
  return useQuery({
    queryKey: qk.outputs(projectId, runId, page),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/runs/{run_id}/outputs', {
          params: {
            path: { project_id: projectId, run_id: runId },
            query: { page, page_size: OUTPUTS_PAGE_SIZE },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useStartDemoRun(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/projects/{project_id}/runs/demo', { params: { path: { project_id: projectId } } })),
    onSuccess: (run) => {
      queryClient.setQueryData(qk.run(projectId, run.id), run);
      void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
      void queryClient.invalidateQueries({ queryKey: qk.models(projectId) });
      void queryClient.invalidateQueries({ queryKey: qk.datasets(projectId) });
    },
  });
}

/** The cost range of a planned run (null body: nothing to estimate yet). */
export function useRunEstimate(projectId: number, body: RunEstimateBody | null) {
  return useQuery({
    queryKey: qk.estimate(projectId, { dataset_id: body?.dataset_id ?? 0, model_ids: body?.model_ids ?? [], repeats: body?.repeats ?? 1 }),
    queryFn: ({ signal }) =>
      unwrap(
        api.POST('/api/projects/{project_id}/runs/estimate', {
          params: { path: { project_id: projectId } },
          body: body!,
          signal,
        }),
      ),
    enabled: body !== null,
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
}

export function useCreateRun(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { dataset_id: number; model_ids: number[]; name?: string | null; repeats?: number }) =>
      unwrap(api.POST('/api/projects/{project_id}/runs', { params: { path: { project_id: projectId } }, body })),
    onSuccess: (run) => {
      queryClient.setQueryData(qk.run(projectId, run.id), run);
      void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
    },
  });
}

export function useModels(projectId: number, enabled = true) {
  return useQuery({
    queryKey: qk.models(projectId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/models', {
          params: { path: { project_id: projectId }, query: { page: 1, page_size: 100 } },
          signal,
        }),
      ),
    enabled,
  });
}

export function useDatasets(projectId: number, enabled = true) {
  return useQuery({
    queryKey: qk.datasets(projectId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/datasets', {
          params: { path: { project_id: projectId }, query: { page: 1, page_size: 100 } },
          signal,
        }),
      ),
    enabled,
  });
}
