import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import type { paths } from '@/api/schema';
import type { Role } from '@/api/types';

export type Invite = Json<paths['/api/projects/{project_id}/invites']['get']['responses'][200]>['items'][number];
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

const invitesKey = (projectId: number) => ['project', projectId, 'invites'] as const;

export function useInvites(projectId: number) {
  return useQuery({
    queryKey: invitesKey(projectId),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/projects/{project_id}/invites', { params: { path: { project_id: projectId } }, signal })),
  });
}

function useInviteMutation<V, R>(projectId: number, fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: invitesKey(projectId) });
      void queryClient.invalidateQueries({ queryKey: ['project', projectId, 'audit'] });
    },
  });
}

export function useCreateInvite(projectId: number) {
  return useInviteMutation(projectId, (body: { email: string; role: Role }) =>
    unwrap(api.POST('/api/projects/{project_id}/invites', { params: { path: { project_id: projectId } }, body })),
  );
}

export function useRevokeInvite(projectId: number) {
  return useInviteMutation(projectId, (inviteId: number) =>
    unwrap(
      api.DELETE('/api/projects/{project_id}/invites/{invite_id}', {
        params: { path: { project_id: projectId, invite_id: inviteId } },
      }),
    ),
  );
}
