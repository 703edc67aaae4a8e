import { ifMatch } from '@/api/errors';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import type { ModelCreateBody, ModelUpdateBody } from '@/api/providerTypes';

export function useModelConfigs(projectId: number, includeArchived: boolean) {
  return useQuery({
    queryKey: qk.modelConfigs(projectId, includeArchived),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/models', {
          params: {
            path: { project_id: projectId },
            query: { page: 1, page_size: 100, ...(includeArchived ? { include_archived: true } : {}) },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

function useModelMutation<V, R>(projectId: number, fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: qk.models(projectId) });
      // Providers show how many models use them.
      void queryClient.invalidateQueries({ queryKey: qk.credentials(projectId) });
    },
  });
}

export function useCreateModel(projectId: number) {
  return useModelMutation(projectId, (body: ModelCreateBody) =>
    unwrap(api.POST('/api/projects/{project_id}/models', { params: { path: { project_id: projectId } }, body })),
  );
}

export function useUpdateModel(projectId: number) {
  return useModelMutation(projectId, ({ id, body, version }: { id: number; body: ModelUpdateBody; version?: number }) =>
    unwrap(
      api.PATCH('/api/projects/{project_id}/models/{model_id}', {
        params: { path: { project_id: projectId, model_id: id } },
        body,
        headers: ifMatch(version),
      }),
    ),
  );
}

export function useDeleteModel(projectId: number) {
  return useModelMutation(projectId, (id: number) =>
    unwrap(
      api.DELETE('/api/projects/{project_id}/models/{model_id}', {
        params: { path: { project_id: projectId, model_id: id } },
      }),
    ),
  );
}

export function useArchiveModel(projectId: number) {
  return useModelMutation(projectId, ({ id, archive }: { id: number; archive: boolean }) => {
    const init = { params: { path: { project_id: projectId, model_id: id } } };
    return unwrap(
      archive
        ? api.POST('/api/projects/{project_id}/models/{model_id}/archive', init)
        : api.POST('/api/projects/{project_id}/models/{model_id}/restore', init),
    );
  });
}
