import { ifMatch } from '@/api/errors';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import {
  datasetPath,
  datasetsPath,
  request,
  type Case,
  type CaseBody,
  type CasesBody,
  type Coverage,
  type Dataset,
  type DatasetDiff,
  type DatasetKind,
  type DatasetVersion,
  importSource,
  type ImportMapping,
  type ImportPreview,
  type Page,
} from '../api';

export const DATASETS_PAGE_SIZE = 20;
export const CASES_PAGE_SIZE = 100;

export interface DatasetListParams {
  page: number;
  q: string;
  kind: string;
  tag: string;
  includeArchived: boolean;
  difficulty?: string;
}

export function useDatasetList(projectId: number, p: DatasetListParams) {
  return useQuery({
    queryKey: qk.datasetList(projectId, { ...p }),
    queryFn: ({ signal }) =>
      request<Page<Dataset>>('GET', datasetsPath(projectId), {
        query: { page: p.page, page_size: DATASETS_PAGE_SIZE, q: p.q.trim(), kind: p.kind, tag: p.tag.trim(), include_archived: p.includeArchived, difficulty: p.difficulty },
        signal,
      }),
    placeholderData: keepPreviousData,
  });
}

export function useDataset(projectId: number, datasetId: number) {
  return useQuery({
    queryKey: qk.dataset(projectId, datasetId),
    queryFn: ({ signal }) => request<Dataset>('GET', datasetPath(projectId, datasetId), { signal }),
  });
}

export interface CaseFilters {
  q: string;
  tag: string;
  difficulty: string;
  version?: number;
}

export function casesQuery(projectId: number, datasetId: number, f: CaseFilters, page: number) {
  return {
    queryKey: qk.cases(projectId, datasetId, { ...f }, page),
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      request<Page<Case>>('GET', `${datasetPath(projectId, datasetId)}/cases`, {
        query: { page, page_size: CASES_PAGE_SIZE, q: f.q.trim(), tag: f.tag.trim(), difficulty: f.difficulty, version: f.version },
        signal,
      }),
    staleTime: 30_000,
  };
}

export function useVersions(projectId: number, datasetId: number) {
  return useQuery({
    queryKey: qk.versions(projectId, datasetId),
    queryFn: ({ signal }) =>
      request<Page<DatasetVersion> | DatasetVersion[]>('GET', `${datasetPath(projectId, datasetId)}/versions`, { query: { page: 1, page_size: 100 }, signal }).then(
        (r) => (Array.isArray(r) ? r : r.items),
      ),
  });
}

export function useDiff(projectId: number, datasetId: number, from: number | null, to: number | null) {
  return useQuery({
    queryKey: qk.diff(projectId, datasetId, from ?? 0, to ?? 0),
    queryFn: ({ signal }) =>
      request<DatasetDiff>('GET', `${datasetPath(projectId, datasetId)}/diff`, { query: { from, to }, signal }),
    enabled: from !== null && to !== null && from !== to,
  });
}

export function useCoverage(projectId: number, datasetId: number) {
  return useQuery({
    queryKey: qk.coverage(projectId, datasetId),
    queryFn: ({ signal }) => request<Coverage>('GET', `${datasetPath(projectId, datasetId)}/coverage`, { signal }),
  });
}

function useDatasetMutation<V, R>(projectId: number, fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: qk.datasets(projectId) }),
  });
}

export function useCreateDataset(projectId: number) {
  return useDatasetMutation(projectId, (body: { name: string; kind: DatasetKind; description?: string }) =>
    request<Dataset>('POST', datasetsPath(projectId), { body }),
  );
}

export interface TagCount {
  tag: string;
  count: number;
}

/** Every tag on the project's datasets, with how many datasets carry it. */
export function useProjectTags(projectId: number) {
  return useQuery({
    queryKey: [...qk.datasets(projectId), 'tags'],
    queryFn: ({ signal }) => request<{ items: TagCount[] }>('GET', `${datasetsPath(projectId)}/tags`, { signal }).then((r) => r.items),
  });
}

export function useRenameTag(projectId: number) {
  return useDatasetMutation(projectId, ({ from, to }: { from: string; to: string }) =>
    request<{ datasets: number }>('POST', `${datasetsPath(projectId)}/tags/rename`, { body: { from, to } }),
  );
}

export function useRemoveTag(projectId: number) {
  return useDatasetMutation(projectId, (tag: string) => request<{ datasets: number }>('POST', `${datasetsPath(projectId)}/tags/remove`, { body: { tag } }));
}

export function useUpdateDataset(projectId: number) {
  return useDatasetMutation(projectId, ({ id, body, version }: { id: number; body: { name?: string; description?: string | null; tags?: string[] }; version?: number }) =>
    request<Dataset>('PATCH', datasetPath(projectId, id), { body, headers: ifMatch(version) }),
  );
}

export function useDeleteDataset(projectId: number) {
  return useDatasetMutation(projectId, (id: number) => request<unknown>('DELETE', datasetPath(projectId, id)));
}

export function useArchiveDataset(projectId: number) {
  return useDatasetMutation(projectId, ({ id, archive }: { id: number; archive: boolean }) =>
    request<Dataset>('POST', `${datasetPath(projectId, id)}/${archive ? 'archive' : 'restore'}`),
  );
}

export function useSaveCase(projectId: number, datasetId: number) {
  return useDatasetMutation(projectId, ({ id, body, version }: { id: number | null; body: CaseBody; version?: number }) =>
    id === null
      ? request<unknown>('POST', `${datasetPath(projectId, datasetId)}/cases`, { body })
      : request<unknown>('PATCH', `${datasetPath(projectId, datasetId)}/cases/${id}`, { body, headers: ifMatch(version) }),
  );
}

/** Several new cases in one new version (all or none). */
export function useAddCases(projectId: number, datasetId: number) {
  return useDatasetMutation(projectId, ({ cases, note }: { cases: CasesBody['cases']; note?: string | null }) =>
    request<unknown>('POST', `${datasetPath(projectId, datasetId)}/cases/bulk`, { body: { cases, note: note || null } satisfies CasesBody }),
  );
}

export function useDeleteCase(projectId: number, datasetId: number) {
  return useDatasetMutation(projectId, (id: number) => request<unknown>('DELETE', `${datasetPath(projectId, datasetId)}/cases/${id}`));
}

export function useImportPreview(projectId: number, datasetId: number) {
  return useMutation({
    mutationFn: async (file: File) =>
      request<ImportPreview>('POST', `${datasetPath(projectId, datasetId)}/import/preview`, { body: await importSource(file) }),
  });
}

export function useImport(projectId: number, datasetId: number) {
  return useDatasetMutation(projectId, async ({ file, mapping }: { file: File; mapping: ImportMapping | null }) =>
    request<DatasetVersion>('POST', `${datasetPath(projectId, datasetId)}/import`, {
      body: { ...(await importSource(file)), ...(mapping ? { mapping } : {}) },
    }),
  );
}
