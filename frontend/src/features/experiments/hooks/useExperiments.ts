import { useEffect } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ifMatch, isApiError } from '@/api/errors';
import {
  experimentPath,
  experimentsPath,
  iterationPath,
  request,
  type Estimate,
  type Experiment,
  type ExperimentListItem,
  type ExperimentConfig,
  type Approved,
  type CaseSplit,
  type Iteration,
  type IterationFacets,
  type IterationSummary,
  type Page,
  type Progress,
  type Suggestion,
  type Template,
} from '../api';

export const expKeys = {
  all: (p: number) => ['project', p, 'experiments'] as const,
  list: (p: number, page: number) => ['project', p, 'experiments', 'list', page] as const,
  one: (p: number, e: number) => ['project', p, 'experiments', 'one', e] as const,
  iterations: (p: number, e: number) => ['project', p, 'experiments', 'one', e, 'iterations'] as const,
  iteration: (p: number, e: number, n: number) => ['project', p, 'experiments', 'one', e, 'iterations', n] as const,
  suggestion: (p: number, e: number, n: number) => ['project', p, 'experiments', 'one', e, 'iterations', n, 'suggestion'] as const,
  facets: (p: number, e: number, n: number, split: string) => ['project', p, 'experiments', 'one', e, 'iterations', n, 'facets', split] as const,
  progress: (p: number, e: number) => ['project', p, 'experiments', 'one', e, 'progress'] as const,
  estimate: (p: number, e: number) => ['project', p, 'experiments', 'one', e, 'estimate'] as const,
  lineage: (p: number, e: number) => ['project', p, 'experiments', 'one', e, 'lineage'] as const,
  report: (p: number, e: number) => ['project', p, 'experiments', 'one', e, 'report'] as const,
  templates: (p: number) => ['project', p, 'experiments', 'templates'] as const,
};

export function useExperimentList(projectId: number, page: number) {
  return useQuery({
    queryKey: expKeys.list(projectId, page),
    queryFn: ({ signal }) => request<Page<ExperimentListItem>>('GET', experimentsPath(projectId), { query: { page, page_size: 20 }, signal }),
    placeholderData: keepPreviousData,
  });
}

export function useExperiment(projectId: number, experimentId: number | null, refetchInterval?: number | false) {
  return useQuery({
    queryKey: expKeys.one(projectId, experimentId ?? 0),
    enabled: experimentId !== null,
    queryFn: ({ signal }) => request<Experiment>('GET', experimentPath(projectId, experimentId ?? 0), { signal }),
    refetchInterval,
  });
}

export function useTemplates(projectId: number) {
  return useQuery({
    queryKey: expKeys.templates(projectId),
    queryFn: ({ signal }) => request<Template[]>('GET', `/api/projects/${projectId}/experiment-templates`, { signal }),
    staleTime: 5 * 60_000,
  });
}

/** A template's dataset (its sample cases) and a draft filled from it. */
export function useApplyTemplate(projectId: number) {
  const qc = useQueryClient();
  return useMutation({
    /** Into the draft `experimentId` (based on its `version`), or a new draft when null. */
    mutationFn: ({ slug, experimentId = null, version = null }: { slug: string; experimentId?: number | null; version?: number | null }) =>
      request<Experiment>('POST', `/api/projects/${projectId}/experiment-templates/${slug}/apply`, {
        body: { experiment_id: experimentId },
        headers: experimentId === null ? {} : ifMatch(version),
      }),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: expKeys.all(projectId) });
      void qc.invalidateQueries({ queryKey: ['project', projectId, 'datasets'] });
    },
  });
}

export function useCreateExperiment(projectId: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { name: string; template?: string; config?: ExperimentConfig }) => {
      const { config, ...rest } = body;
      return request<Experiment>('POST', experimentsPath(projectId), { body: { ...rest, ...(config ?? {}) } });
    },
    onSuccess: () => void qc.invalidateQueries({ queryKey: expKeys.all(projectId) }),
  });
}

/** The auto-save: a partial PATCH of the draft's name and configuration, based on `version` (412 when stale). */
export function useSaveDraft(projectId: number, experimentId: number | null) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { name?: string; config?: ExperimentConfig; version: number | null }) => {
      const { config, version, ...rest } = body;
      return request<Experiment>('PATCH', experimentPath(projectId, experimentId ?? 0), { body: { ...rest, ...(config ?? {}) }, headers: ifMatch(version) });
    },
    onSuccess: (e) => {
      qc.setQueryData(expKeys.one(projectId, e.id), e);
      void qc.invalidateQueries({ queryKey: expKeys.estimate(projectId, e.id) });
    },
  });
}

/** The server's per-step validation: 422 with field errors when the step is not valid. */
export function useValidateStep(projectId: number, experimentId: number | null) {
  return useMutation({
    mutationFn: (step: string) => request<unknown>('POST', `${experimentPath(projectId, experimentId ?? 0)}/validate`, { body: { steps: [step] } }),
  });
}

export function useStartExperiment(projectId: number, experimentId: number | null) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => request<Experiment>('POST', `${experimentPath(projectId, experimentId ?? 0)}/start`, { body: {} }),
    onSuccess: () => void qc.invalidateQueries({ queryKey: expKeys.all(projectId) }),
  });
}

export function useEstimate(projectId: number, experimentId: number | null, version: unknown) {
  return useQuery({
    queryKey: [...expKeys.estimate(projectId, experimentId ?? 0), version],
    enabled: experimentId !== null,
    queryFn: ({ signal }) => request<Estimate>('GET', `${experimentPath(projectId, experimentId ?? 0)}/estimate`, { signal }),
    placeholderData: keepPreviousData,
    retry: false,
  });
}

export function useDeleteExperiment(projectId: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => request<unknown>('DELETE', experimentPath(projectId, id)),
    onSuccess: () => void qc.invalidateQueries({ queryKey: expKeys.all(projectId) }),
  });
}

/** `version` changes when the live state moves (phase, iteration): the list refetches. */
export function useIterations(projectId: number, experimentId: number, version = '') {
  const qc = useQueryClient();
  const key = expKeys.iterations(projectId, experimentId);
  useEffect(() => {
    if (version) void qc.invalidateQueries({ queryKey: key });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [version]);
  return useQuery<IterationSummary[]>({
    queryKey: key,
    queryFn: ({ signal }) =>
      request<Page<IterationSummary>>('GET', `${experimentPath(projectId, experimentId)}/iterations`, { query: { page: 1, page_size: 100 }, signal }).then((r) => r.items),
  });
}

/** Polled every `pollWhileRefining` ms while the refiner works on it (after a rejection the
 * next suggestion arrives without a reload). */
export function useIteration(projectId: number, experimentId: number, number: number | null, pollWhileRefining: number | false = false) {
  return useQuery({
    queryKey: expKeys.iteration(projectId, experimentId, number ?? 0),
    enabled: number !== null && number > 0,
    queryFn: ({ signal }) => request<Iteration>('GET', iterationPath(projectId, experimentId, number ?? 0), { signal }),
    refetchInterval: (q) => (pollWhileRefining && q.state.data?.status === 'refining' ? pollWhileRefining : false),
  });
}

/** The iteration's facets on one split; the previous split's stay shown while the next loads. */
export function useIterationFacets(projectId: number, experimentId: number, number: number, split: CaseSplit, status = '') {
  return useQuery({
    // the status is in the key: facets appear (and change) when the iteration is aggregated
    queryKey: [...expKeys.facets(projectId, experimentId, number, split), status],
    queryFn: ({ signal }) => request<IterationFacets>('GET', `${iterationPath(projectId, experimentId, number)}/facets`, { query: { split }, signal }),
    placeholderData: keepPreviousData,
  });
}

/** The iteration's latest suggestion; null while there is none (404). */
export function useSuggestion(projectId: number, experimentId: number, number: number, enabled = true) {
  return useQuery({
    queryKey: expKeys.suggestion(projectId, experimentId, number),
    enabled,
    queryFn: ({ signal }) =>
      request<Suggestion>('GET', `${iterationPath(projectId, experimentId, number)}/suggestion`, { signal }).catch((e: unknown) => {
        if (isApiError(e) && e.status === 404) return null;
        throw e;
      }),
  });
}

/** The live state (phase, counts, spend, suggestion ready); polled when the stream is down. */
export function useProgress(projectId: number, experimentId: number, refetchInterval: number | false) {
  return useQuery({
    queryKey: expKeys.progress(projectId, experimentId),
    queryFn: ({ signal }) => request<Progress>('GET', `${experimentPath(projectId, experimentId)}/progress`, { signal }),
    refetchInterval,
  });
}

export type ControlAction = 'pause' | 'resume' | 'cancel';

export function useExperimentControl(projectId: number, experimentId: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (a: ControlAction) => request<Progress>('POST', `${experimentPath(projectId, experimentId)}/${a}`, { body: {} }),
    onSuccess: (p) => qc.setQueryData(expKeys.progress(projectId, experimentId), p),
    onSettled: () => void qc.invalidateQueries({ queryKey: expKeys.one(projectId, experimentId) }),
  });
}

export type ReviewBody =
  | { action: 'approve'; comment?: string }
  | { action: 'reject'; reason: string }
  | { action: 'edit'; diff: string; comment?: string }
  | { action: 'counterexamples'; cases: Array<{ input: Record<string, unknown>; expected?: string | null }> };

/** Approve, reject, edit the diff, add counterexamples: each refreshes the experiment. */
export function useReview(projectId: number, experimentId: number, number: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (b: ReviewBody) => {
      const { action, ...body } = b;
      return request<Approved | Suggestion | Record<string, unknown>>('POST', `${iterationPath(projectId, experimentId, number)}/${action}`, { body });
    },
    onSuccess: () => void qc.invalidateQueries({ queryKey: expKeys.one(projectId, experimentId) }),
  });
}

export interface AssistResult {
  result: unknown;
  cost_micros: number;
  tokens_in?: number;
  tokens_out?: number;
}

export function useAssist(projectId: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ path, input, experimentId }: { kind: string; path: string; input: Record<string, unknown>; experimentId: number | null }) =>
      request<AssistResult>('POST', `/api/projects/${projectId}/assist/${path}`, { body: { ...input, experiment_id: experimentId } }),
    onSuccess: (_r, v) => {
      if (v.experimentId) void qc.invalidateQueries({ queryKey: expKeys.one(projectId, v.experimentId) });
    },
  });
}

/** A draft copy of an experiment (POST .../duplicate): to change what a finished one used. */
export function useDuplicateExperiment(projectId: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => request<Experiment>('POST', `${experimentPath(projectId, id)}/duplicate`),
    onSuccess: () => void qc.invalidateQueries({ queryKey: expKeys.all(projectId) }),
  });
}
