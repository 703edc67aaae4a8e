import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import { ifMatch } from '@/api/errors';
import type { Role } from '@/api/types';

export function useMembers(projectId: number, page = 1) {
  return useQuery({
    queryKey: qk.members(projectId, page),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/members', {
          params: { path: { project_id: projectId }, query: { page, page_size: 100 } },
          signal,
        }),
      ),
  });
}

function useMemberMutation<V, R>(projectId: number, fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: qk.membersAll(projectId) });
      // member_count and possibly the caller's own role changed
      void queryClient.invalidateQueries({ queryKey: qk.project(projectId), exact: true });
      void queryClient.invalidateQueries({ queryKey: qk.projectsAll });
    },
  });
}

export function useAddMember(projectId: number) {
  return useMemberMutation(projectId, (body: { email: string; role: Role }) =>
    unwrap(api.POST('/api/projects/{project_id}/members', { params: { path: { project_id: projectId } }, body })),
  );
}

/** A role change based on the member's `version` (row_version): 412 when it changed meanwhile. */
export function useUpdateMember(projectId: number) {
  return useMemberMutation(projectId, ({ userId, role, version }: { userId: number; role: Role; version?: number }) =>
    unwrap(
      api.PATCH('/api/projects/{project_id}/members/{user_id}', {
        params: { path: { project_id: projectId, user_id: userId } },
        body: { role },
        headers: ifMatch(version),
      }),
    ),
  );
}

export function useRemoveMember(projectId: number) {
  return useMemberMutation(projectId, (userId: number) =>
    unwrap(
      api.DELETE('/api/projects/{project_id}/members/{user_id}', {
        params: { path: { project_id: projectId, user_id: userId } },
      }),
    ),
  );
}
