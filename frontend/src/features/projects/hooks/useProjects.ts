import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import type { ProjectCreateBody, Role } from '@/api/types';

export const PROJECTS_PAGE_SIZE = 20;

export function useProjects(params: { page: number; q?: string; role?: Role }) {
  return useQuery({
    queryKey: qk.projects(params),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects', {
          params: {
            query: {
              page: params.page,
              page_size: PROJECTS_PAGE_SIZE,
              ...(params.q ? { q: params.q } : {}),
              ...(params.role ? { role: params.role } : {}),
            },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useProject(projectId: number) {
  return useQuery({
    queryKey: qk.project(projectId),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/projects/{project_id}', { params: { path: { project_id: projectId } }, signal })),
    enabled: Number.isFinite(projectId),
  });
}

export function useCreateProject() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ProjectCreateBody) => unwrap(api.POST('/api/projects', { body })),
    onSuccess: (project) => {
      queryClient.setQueryData(qk.project(project.id), project);
      void queryClient.invalidateQueries({ queryKey: qk.projectsAll });
    },
  });
}
