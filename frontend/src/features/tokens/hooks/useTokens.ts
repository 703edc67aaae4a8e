import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

const key = ['tokens'] as const;

export function useTokens() {
  return useQuery({
    queryKey: key,
    queryFn: ({ signal }) => unwrap(api.GET('/api/auth/tokens', { signal })),
  });
}

export function useCreateToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/api/auth/tokens', { body: { name } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  });
}

export function useRevokeToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: number) =>
      unwrap(api.DELETE('/api/auth/tokens/{token_id}', { params: { path: { token_id: tokenId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  });
}
