import { ifMatch } from '@/api/errors';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { qk } from '@/api/queryKeys';
import type { PromptCreateBody, VersionBody } from '../api';

export const PROMPTS_PAGE_SIZE = 20;

export function usePromptList(projectId: number, page: number) {
  return useQuery({
    queryKey: [...qk.prompts(projectId), 'list', page],
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/prompts', {
          params: { path: { project_id: projectId }, query: { page, page_size: PROMPTS_PAGE_SIZE } },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function usePrompt(projectId: number, promptId: number) {
  return useQuery({
    queryKey: [...qk.prompts(projectId), 'one', promptId],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/projects/{project_id}/prompts/{prompt_id}', { params: { path: { project_id: projectId, prompt_id: promptId } }, signal })),
  });
}

/** The chain of versions `versionId` was edited from, oldest first (up to 100 steps). */
export function useLineage(projectId: number, promptId: number, versionId: number | null) {
  return useQuery({
    queryKey: [...qk.prompts(projectId), 'one', promptId, 'lineage', versionId],
    enabled: versionId !== null,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/prompts/{prompt_id}/versions/{prompt_version_id}/lineage', {
          params: { path: { project_id: projectId, prompt_id: promptId, prompt_version_id: versionId ?? 0 }, query: { page: 1, page_size: 100 } },
          signal,
        }),
      ),
  });
}

// Every write changes the list (latest, production) and the New-run picker: refresh both.
function useInvalidatePrompts(projectId: number) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: qk.prompts(projectId) });
}

export function useCreatePrompt(projectId: number) {
  const invalidate = useInvalidatePrompts(projectId);
  return useMutation({
    mutationFn: (body: PromptCreateBody) => unwrap(api.POST('/api/projects/{project_id}/prompts', { params: { path: { project_id: projectId } }, body })),
    onSuccess: () => void invalidate(),
  });
}

export function useAddVersion(projectId: number, promptId: number) {
  const invalidate = useInvalidatePrompts(projectId);
  return useMutation({
    mutationFn: (body: VersionBody) =>
      unwrap(api.POST('/api/projects/{project_id}/prompts/{prompt_id}/versions', { params: { path: { project_id: projectId, prompt_id: promptId } }, body })),
    onSuccess: () => void invalidate(),
  });
}

export function useSetProduction(projectId: number, promptId: number) {
  const invalidate = useInvalidatePrompts(projectId);
  return useMutation({
    /** Based on the prompt's `version` (row_version): 412 when production changed meanwhile. */
    mutationFn: ({ versionId, version }: { versionId: number; version?: number | null }) =>
      unwrap(
        api.PUT('/api/projects/{project_id}/prompts/{prompt_id}/production', {
          params: { path: { project_id: projectId, prompt_id: promptId } },
          body: { version_id: versionId },
          headers: ifMatch(version),
        }),
      ),
    onSuccess: () => void invalidate(),
  });
}
