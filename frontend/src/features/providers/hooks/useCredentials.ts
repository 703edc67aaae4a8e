import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap } from '@/api/client';
import { looseApi } from '@/api/loose';
import { qk } from '@/api/queryKeys';
import type {
  Credential,
  CredentialBody,
  CredentialPage,
  DiscoverResult,
  ProviderKind,
  TestResult,
} from '@/api/providerTypes';

const base = '/api/projects/{project_id}/credentials';
const one = '/api/projects/{project_id}/credentials/{credential_id}';

export function useProviderKinds(enabled = true) {
  return useQuery({
    queryKey: qk.providerKinds,
    queryFn: ({ signal }) => unwrap(looseApi.GET('/api/provider-kinds', { signal })) as Promise<ProviderKind[]>,
    staleTime: Infinity,
    enabled,
  });
}

export function useCredentials(projectId: number, enabled = true) {
  return useQuery({
    queryKey: qk.credentials(projectId),
    queryFn: ({ signal }) =>
      unwrap(
        looseApi.GET(base, {
          params: { path: { project_id: projectId }, query: { page: 1, page_size: 100 } },
          signal,
        }),
      ) as Promise<CredentialPage>,
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
    mutationFn: (body: CredentialBody) =>
      unwrap(looseApi.POST(base, { params: { path: { project_id: projectId } }, body })) as Promise<Credential>,
    onSuccess: invalidate,
  });
}

export function useUpdateCredential(projectId: number) {
  const invalidate = useInvalidate(projectId);
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: CredentialBody }) =>
      unwrap(
        looseApi.PATCH(one, { params: { path: { project_id: projectId, credential_id: id } }, body }),
      ) as Promise<Credential>,
    onSuccess: invalidate,
  });
}

export function useDeleteCredential(projectId: number) {
  const invalidate = useInvalidate(projectId);
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(looseApi.DELETE(one, { params: { path: { project_id: projectId, credential_id: id } } })),
    onSuccess: invalidate,
  });
}

export function useTestCredential(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        looseApi.POST(`${one}/test`, { params: { path: { project_id: projectId, credential_id: id } } }),
      ) as Promise<TestResult>,
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
            looseApi.GET(`${one}/discover`, {
              params: { path: { project_id: projectId, credential_id: credentialId } },
              signal,
            }),
          ) as Promise<DiscoverResult>,
        staleTime: 60_000,
      }),
  });
}
