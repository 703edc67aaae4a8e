import { ifMatch } from '@/api/errors';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import type { CredentialCreateBody, CredentialUpdateBody } from '@/api/providerTypes';

export function useProviderKinds(enabled = true) {
  return useQuery({
    queryKey: qk.providerKinds,
    queryFn: ({ signal }) => unwrap(api.GET('/api/provider-kinds', { signal })),
    staleTime: Infinity,
    enabled,
  });
}

export function useCredentials(projectId: number, enabled = true) {
  return useQuery({
    queryKey: qk.credentials(projectId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/credentials', {
          params: { path: { project_id: projectId }, query: { page: 1, page_size: 100 } },
          signal,
        }),
      ),
    enabled,
  });
}

function useInvalidate(projectId: number) {
  const queryClient = useQueryClient();
  return () => {
    void queryClient.invalidateQueries({ queryKey: qk.credentials(projectId) });
    // Model rows show their credential's label.
    void queryClient.invalidateQueries({ queryKey: qk.models(projectId) });
  };
}

export function useCreateCredential(projectId: number) {
  const invalidate = useInvalidate(projectId);
  return useMutation({
    mutationFn: (body: CredentialCreateBody) =>
      unwrap(api.POST('/api/projects/{project_id}/credentials', { params: { path: { project_id: projectId } }, body })),
    onSuccess: invalidate,
  });
}

export function useUpdateCredential(projectId: number) {
  const invalidate = useInvalidate(projectId);
  return useMutation({
    mutationFn: ({ id, body, version }: { id: number; body: CredentialUpdateBody; version?: number }) =>
      unwrap(
        api.PATCH('/api/projects/{project_id}/credentials/{credential_id}', {
          params: { path: { project_id: projectId, credential_id: id } },
          body,
          headers: ifMatch(version),
        }),
      ),
    onSuccess: invalidate,
  });
}

export function useDeleteCredential(projectId: number) {
  const invalidate = useInvalidate(projectId);
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        api.DELETE('/api/projects/{project_id}/credentials/{credential_id}', {
          params: { path: { project_id: projectId, credential_id: id } },
        }),
      ),
    onSuccess: invalidate,
  });
}

export function useTestCredential(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        api.POST('/api/projects/{project_id}/credentials/{credential_id}/test', {
          params: { path: { project_id: projectId, credential_id: id } },
        }),
      ),
    // The server records the result on the credential (last_test_*).
    onSettled: () => void queryClient.invalidateQueries({ queryKey: qk.credentials(projectId) }),
  });
}

/** Lists the provider's models; fetched on demand (the Discover button), never on mount. */
export function useDiscoverModels(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (credentialId: number) =>
      queryClient.fetchQuery({
        queryKey: qk.discover(projectId, credentialId),
        queryFn: ({ signal }) =>
          unwrap(
            api.GET('/api/projects/{project_id}/credentials/{credential_id}/discover', {
              params: { path: { project_id: projectId, credential_id: credentialId } },
              signal,
            }),
          ),
        staleTime: 60_000,
      }),
  });
}
