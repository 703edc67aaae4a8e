import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { EventSourceCtor, StreamState } from '@/api/useEventStream';
import { qk } from '@/api/queryKeys';
import { request } from '@/features/datasets/api';
import {
  documentsPath,
  GENERATION_EVENTS,
  generationPath,
  jobPath,
  parseGenerationEvent,
  TERMINAL_JOB,
  type Accepted,
  type DocumentInfo,
  type DocumentPage,
  type GenerationEstimate,
  type GenerationJob,
  type GenerationKind,
  type GenerationRequest,
  type JobSummaryPage,
} from '../api';

const jobKey = (projectId: number, jobId: number) => ['project', projectId, 'generation', jobId] as const;
const jobsKey = (projectId: number) => ['project', projectId, 'generation', 'list'] as const;

/** The project's recent generation jobs (kept a week), newest first; polls while one is running. */
export function useGenerationJobs(projectId: number, enabled = true) {
  return useQuery({
    queryKey: jobsKey(projectId),
    queryFn: ({ signal }) => request<JobSummaryPage>('GET', generationPath(projectId), { query: { page: 1, page_size: 10 }, signal }),
    enabled,
    refetchInterval: (query) => (query.state.data?.items.some((j) => !TERMINAL_JOB.includes(j.status)) ? 3000 : false),
  });
}
const documentsKey = (projectId: number) => ['project', projectId, 'documents'] as const;

export function useEstimateGeneration(projectId: number, kind: GenerationKind) {
  return useMutation({
    mutationFn: (body: GenerationRequest) => request<GenerationEstimate>('POST', `${generationPath(projectId)}/${kind}/estimate`, { body }),
  });
}

export function useStartGeneration(projectId: number, kind: GenerationKind) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: GenerationRequest) => request<GenerationJob>('POST', `${generationPath(projectId)}/${kind}`, { body }),
    onSuccess: (job) => {
      if (job && typeof job.id === 'number') queryClient.setQueryData(jobKey(projectId, job.id), job);
      void queryClient.invalidateQueries({ queryKey: jobsKey(projectId) });
    },
  });
}

/** One job; polls while it is not finished and the live stream is not open. */
export function useGenerationJob(projectId: number, jobId: number | null, streamOpen: boolean) {
  return useQuery({
    queryKey: jobKey(projectId, jobId ?? 0),
    queryFn: ({ signal }) => request<GenerationJob>('GET', jobPath(projectId, jobId!), { signal }),
    enabled: jobId !== null,
    refetchInterval: (query) => (!streamOpen && query.state.data && !TERMINAL_JOB.includes(query.state.data.status) ? 2000 : false),
  });
}

/** Follows a job's Server-Sent Events into the cached job, like useEventStream does for runs. */
export function useGenerationStream(projectId: number, jobId: number | null, options: { EventSourceImpl?: EventSourceCtor } = {}) {
  const { EventSourceImpl } = options;
  const queryClient = useQueryClient();
  const [state, setState] = useState<StreamState>('idle');

  useEffect(() => {
    if (jobId === null) {
      setState('idle');
      return;
    }
    const Impl = EventSourceImpl ?? (globalThis as unknown as { EventSource?: EventSourceCtor }).EventSource ?? undefined;
    if (!Impl) {
      setState('unsupported');
      return;
    }
    let finished = false;
    const key = jobKey(projectId, jobId);
    const source = new Impl(`${jobPath(projectId, jobId)}/events`, { withCredentials: true });
    setState('connecting');
    source.onopen = () => setState('open');
    source.onerror = () => {
      if (!finished) setState(source.readyState === 2 ? 'error' : 'connecting');
    };
    const handle = (ev: MessageEvent) => {
      const event = parseGenerationEvent(ev);
      if (!event || finished) return;
      const old = queryClient.getQueryData<GenerationJob>(key);
      if (old && (event.type === 'generation.finished' || event.batches_done >= old.batches_done)) {
        queryClient.setQueryData<GenerationJob>(key, {
          ...old,
          status: event.status ?? old.status,
          batches: event.batches ?? old.batches,
          batches_done: event.batches_done ?? old.batches_done,
          requested: event.requested ?? old.requested,
          received: event.received ?? old.received,
          cost_micros: event.cost_micros === undefined ? old.cost_micros : event.cost_micros,
        });
      }
      if (event.type === 'generation.finished' || TERMINAL_JOB.includes(event.status)) {
        finished = true;
        source.close();
        setState('closed');
        // The preview's items and warnings come with the job, not the event.
        void queryClient.invalidateQueries({ queryKey: key });
      }
    };
    for (const type of GENERATION_EVENTS) source.addEventListener(type, handle);
    source.addEventListener('message', handle);
    return () => {
      finished = true;
      source.close();
    };
  }, [projectId, jobId, EventSourceImpl, queryClient]);

  return { state };
}

export function useAcceptGeneration(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ jobId, dataset_name, selected }: { jobId: number; dataset_name: string; selected: number[] | null }) =>
      request<Accepted>('POST', `${jobPath(projectId, jobId)}/accept`, { body: { dataset_name, selected } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: qk.datasets(projectId) });
      void queryClient.invalidateQueries({ queryKey: ['project', projectId, 'generation'] });
    },
  });
}

export function useDocuments(projectId: number, enabled: boolean) {
  return useQuery({
    queryKey: documentsKey(projectId),
    queryFn: ({ signal }) =>
      request<DocumentPage>('GET', documentsPath(projectId), { query: { page: 1, page_size: 100 }, signal }).then((r) => r.items),
    enabled,
  });
}

export function useUploadDocument(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (file: File) => {
      const form = new FormData();
      form.set('file', file, file.name);
      return request<DocumentInfo>('POST', documentsPath(projectId), { body: form });
    },
    onSuccess: (doc) => {
      // Listed at once, so the select can show it before the list is fetched again.
      // (without the extracted text the upload answers with: it can be megabytes)
      const info = Object.fromEntries(Object.entries(doc).filter(([k]) => k !== 'text')) as DocumentInfo;
      queryClient.setQueryData<DocumentInfo[]>(documentsKey(projectId), (old) => [...(old ?? []).filter((d) => d.id !== info.id), info]);
      void queryClient.invalidateQueries({ queryKey: documentsKey(projectId) });
    },
  });
}
