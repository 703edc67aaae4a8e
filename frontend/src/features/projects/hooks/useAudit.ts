import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';

export const AUDIT_PAGE_SIZE = 20;

export function useAudit(projectId: number, page: number, enabled = true) {
  return useQuery({
    queryKey: ['project', projectId, 'audit', page] as const,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/audit', {
          params: { path: { project_id: projectId }, query: { page, page_size: AUDIT_PAGE_SIZE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
    enabled,
  });
}
