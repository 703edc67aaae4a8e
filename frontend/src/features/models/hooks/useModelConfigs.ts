import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap } from '@/api/client';
import { looseApi } from '@/api/loose';
import { qk } from '@/api/queryKeys';
import type { ModelBody, ModelConfig, ModelConfigPage } from '@/api/providerTypes';

const base = '/api/projects/{project_id}/models';
const one = '/api/projects/{project_id}/models/{model_id}';

export function useModelConfigs(projectId: number, includeArchived: boolean) {
  return useQuery({
    queryKey: qk.modelConfigs(projectId, includeArchived),
    queryFn: ({ signal }) =>
      unwrap(
        looseApi.GET(base, {
          params: {
            path: { project_id: projectId },
            query: { page: 1, page_size: 100, ...(includeArchived ? { include_archived: true } : {}) },
          },
          signal,
        }),
      ) as Promise<ModelConfigPage>,
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
  return useModelMutation(projectId, (body: ModelBody) =>
    unwrap(looseApi.POST(base, { params: { path: { project_id: projectId } }, body })) as Promise<ModelConfig>,
  );
}

export function useUpdateModel(projectId: number) {
  return useModelMutation(projectId, ({ id, body }: { id: number; body: ModelBody }) =>
    unwrap(looseApi.PATCH(one, { params: { path: { project_id: projectId, model_id: id } }, body })) as Promise<ModelConfig>,
  );
}

export function useDeleteModel(projectId: number) {
  return useModelMutation(projectId, (id: number) =>
    unwrap(looseApi.DELETE(one, { params: { path: { project_id: projectId, model_id: id } } })),
  );
}

export function useArchiveModel(projectId: number) {
  return useModelMutation(projectId, ({ id, archive }: { id: number; archive: boolean }) =>
    unwrap(
      looseApi.POST(`${one}/${archive ? 'archive' : 'restore'}`, {
        params: { path: { project_id: projectId, model_id: id } },
      }),
    ) as Promise<ModelConfig>,
  );
}
