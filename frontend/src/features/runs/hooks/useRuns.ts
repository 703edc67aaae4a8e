import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import { ifMatch } from '@/api/errors';
import { isTerminal } from '@/api/types';
import { datasetPath, request as datasetRequest } from '@/features/datasets/api';
import {
  itemsOf,
  promptsPath,
  request,
  runPath,
  runsPath,
  type Output,
  type OutputDetail,
  type Page,
  type Progress,
  type Prompt,
  type PromptVersion,
  type Run,
  type RunAction,
  type RunCreateBody,
  type RunEstimate,
  type RunStatus,
  type RunSummary,
} from '../api';

export const RUNS_PAGE_SIZE = 20;
export const OUTPUTS_PAGE_SIZE = 50;
export const FAILURES_PAGE_SIZE = 10;
export const RUNS_LIST_POLL_MS = 5000;
export const SETTLE_POLL_MS = 2000;
const SETTLE_WINDOW_MS = 120_000;

/** A stopped run whose in-flight cells are not all recorded yet (for up to two minutes after it stopped). */
export function settling(p: Pick<Progress, 'status' | 'done' | 'skipped' | 'total' | 'finished_at'>, now = Date.now()): boolean {
  if (!isTerminal(p.status) || p.done + (p.skipped ?? 0) >= p.total || !p.finished_at) return false;
  return now - new Date(p.finished_at).getTime() < SETTLE_WINDOW_MS;
}

export function useRuns(projectId: number, page = 1, status: RunStatus | '' = '') {
  return useQuery({
    queryKey: qk.runs(projectId, page, status),
    queryFn: ({ signal }) =>
      request<Page<Run>>('GET', runsPath(projectId), { query: { page, page_size: RUNS_PAGE_SIZE, status }, signal }),
    placeholderData: keepPreviousData,
    // Runs in progress move on their own: refresh the list while any is unfinished.
    refetchInterval: (query) => (query.state.data?.items.some((r) => !isTerminal(r.status)) ? RUNS_LIST_POLL_MS : false),
  });
}

/** One run; with pollMs it polls while the run is not finished (a fallback when the live stream is down). */
export function useRun(projectId: number, runId: number, options: { pollMs?: number | false } = {}) {
  const pollMs = options.pollMs ?? false;
  return useQuery({
    queryKey: qk.run(projectId, runId),
    queryFn: ({ signal }) => request<Run>('GET', runPath(projectId, runId), { signal }),
    refetchInterval: (query) => (pollMs && !isTerminal(query.state.data?.status) ? pollMs : false),
  });
}

/** The live counters (GET /progress); the event stream writes the same payload into this cache. */
export function useProgress(projectId: number, runId: number, options: { pollMs?: number | false; enabled?: boolean } = {}) {
  const pollMs = options.pollMs ?? false;
  return useQuery({
    queryKey: qk.progress(projectId, runId),
    queryFn: ({ signal }) => request<Progress>('GET', `${runPath(projectId, runId)}/progress`, { signal }),
    enabled: options.enabled ?? true,
    refetchInterval: (query) => {
      const p = query.state.data;
      if (!p || !isTerminal(p.status)) return pollMs;
      // Cells in flight when a run stops (cancel, budget) are still recorded just after it: settle.
      return settling(p) ? SETTLE_POLL_MS : false;
    },
  });
}

export interface OutputFilters {
  target_id?: number | '';
  status?: string;
  error_class?: string;
}

export function useOutputs(projectId: number, runId: number, page = 1, filters: OutputFilters = {}, pageSize = OUTPUTS_PAGE_SIZE) {
  return useQuery({
    queryKey: qk.outputs(projectId, runId, page, { ...filters, pageSize }),
    queryFn: ({ signal }) =>
      request<Page<Output>>('GET', `${runPath(projectId, runId)}/outputs`, {
        query: { page, page_size: pageSize, ...filters },
        signal,
      }),
    placeholderData: keepPreviousData,
  });
}

export function useOutputDetail(projectId: number, runId: number, outputId: number | null) {
  return useQuery({
    queryKey: [...qk.outputsAll(projectId, runId), 'detail', outputId ?? 0] as const,
    queryFn: ({ signal }) => request<OutputDetail>('GET', `${runPath(projectId, runId)}/outputs/${outputId}`, { signal }),
    enabled: outputId !== null,
  });
}

export function useSummary(projectId: number, runId: number) {
  return useQuery({
    queryKey: qk.summary(projectId, runId),
    queryFn: ({ signal }) => request<RunSummary>('GET', `${runPath(projectId, runId)}/summary`, { signal }),
    placeholderData: keepPreviousData,
  });
}

/** Pause, resume, cancel or retry the failed cells; the answer is the run as it now is. */
export function useRunAction(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: RunAction) => request<Run>('POST', `${runPath(projectId, runId)}/${action}`),
    onSuccess: (run) => {
      queryClient.setQueryData(qk.run(projectId, runId), run);
      queryClient.setQueryData<Progress>(qk.progress(projectId, runId), (old) => (old ? { ...old, status: run.status } : old));
      void queryClient.invalidateQueries({ queryKey: qk.progress(projectId, runId) });
      void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) });
      void queryClient.invalidateQueries({ queryKey: qk.summary(projectId, runId) });
      void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
    },
  });
}

/** Raise (or lift) a run's budget, then resume it: how a run stopped for budget goes on. */
export function useRaiseBudget(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    /** Based on the run's `version` (row_version): 412 when someone changed the budget meanwhile. */
    mutationFn: async ({ budgetMicros, version }: { budgetMicros: number | null; version?: number | null }) => {
      await request<Run>('PATCH', runPath(projectId, runId), { body: { budget_micros: budgetMicros }, headers: ifMatch(version) });
      return request<Run>('POST', `${runPath(projectId, runId)}/resume`);
    },
    onSuccess: (run) => {
      queryClient.setQueryData(qk.run(projectId, runId), run);
      void queryClient.invalidateQueries({ queryKey: qk.progress(projectId, runId) });
      void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
    },
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

/** The estimate of a configured run (writes nothing); a mutation because the form posts it on "Review". */
export function useEstimateRun(projectId: number) {
  return useMutation({
    mutationFn: (body: RunCreateBody) => request<RunEstimate>('POST', `${runsPath(projectId)}/estimate`, { body }),
  });
}

export function useCreateRun(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RunCreateBody) => request<Run>('POST', runsPath(projectId), { body }),
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

/** A dataset version as the picker needs it (`id` when the API exposes it). */
export interface VersionOption {
  id?: number;
  number: number;
  case_count: number;
  created_at?: string;
}

export function useDatasetVersions(projectId: number, datasetId: number | null) {
  return useQuery({
    queryKey: qk.versions(projectId, datasetId ?? 0),
    queryFn: ({ signal }) =>
      datasetRequest<Page<VersionOption> | VersionOption[]>('GET', `${datasetPath(projectId, datasetId!)}/versions`, {
        query: { page: 1, page_size: 100 },
        signal,
      }).then((r) => itemsOf(r)),
    enabled: datasetId !== null,
  });
}

export function usePrompts(projectId: number) {
  return useQuery({
    queryKey: qk.prompts(projectId),
    queryFn: ({ signal }) =>
      request<Page<Prompt> | Prompt[]>('GET', promptsPath(projectId), { query: { page: 1, page_size: 100 }, signal }).then((r) =>
        itemsOf(r).filter((p) => !p.archived_at),
      ),
  });
}

export function usePromptVersions(projectId: number, promptId: number | null) {
  return useQuery({
    queryKey: qk.promptVersions(projectId, promptId ?? 0),
    queryFn: ({ signal }) =>
      request<Page<PromptVersion> | PromptVersion[]>('GET', `${promptsPath(projectId)}/${promptId}/versions`, {
        query: { page: 1, page_size: 100 },
        signal,
      }).then((r) => [...itemsOf(r)].sort((a, b) => b.number - a.number)),
    enabled: promptId !== null,
  });
}
