import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import { ifMatch } from '@/api/errors';
import type { SettingsPatch } from '../settingsForm';

export const settingsKey = (projectId: number) => ['project', projectId, 'settings'] as const;

export function useProjectSettings(projectId: number) {
  return useQuery({
    queryKey: settingsKey(projectId),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/projects/{project_id}/settings', { params: { path: { project_id: projectId } }, signal })),
  });
}

export function useSaveSettings(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, version }: { body: SettingsPatch; version?: number }) =>
      unwrap(api.PATCH('/api/projects/{project_id}/settings', { params: { path: { project_id: projectId } }, body, headers: ifMatch(version) })),
    onSuccess: (saved) => {
      queryClient.setQueryData(settingsKey(projectId), saved);
      // the name and description show in the project header and list
      void queryClient.invalidateQueries({ queryKey: qk.project(projectId), exact: true });
      void queryClient.invalidateQueries({ queryKey: qk.projectsAll });
      void queryClient.invalidateQueries({ queryKey: ['project', projectId, 'audit'] });
    },
  });
}
