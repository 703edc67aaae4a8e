import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { ifMatch } from '@/api/errors';
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Body<P> = P extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type ScorerKind = Json<paths['/api/scorer-kinds']['get']['responses'][200]>[number];
export type ScorerPage = Json<paths['/api/projects/{project_id}/scorers']['get']['responses'][200]>;
export type Scorer = ScorerPage['items'][number];
export type ScorerDetail = Json<paths['/api/projects/{project_id}/scorers/{scorer_id}']['get']['responses'][200]>;
export type ScorerCreateBody = Body<paths['/api/projects/{project_id}/scorers']['post']>;
export type PreviewBody = Body<paths['/api/projects/{project_id}/scorers/preview']['post']>;
export type JudgePrompt = Json<paths['/api/projects/{project_id}/scorers/preview']['post']['responses'][200]>;
export type TryBody = Body<paths['/api/projects/{project_id}/scorers/try']['post']>;
export type Trial = Json<paths['/api/projects/{project_id}/scorers/try']['post']['responses'][200]>;
export type Params = Record<string, unknown>;
/** A body the generic editor builds: the kind is picked and its params filled at run time
 * from the kind's JSON Schema, so which variant of the document's oneOf (discriminated by
 * kind) it is cannot be known statically. The server checks the params against the kind
 * (422 under params.<field>), so the hooks take drafts and send them as the variant. */
export type Draft<B> = Omit<B, 'kind' | 'params'> & { kind: string; params: Params };
const asBody = <B>(draft: Draft<B>) => draft as unknown as B;

export const PAGE_SIZE = 20;

const keys = {
  all: (projectId: number) => ['project', projectId, 'scorers'] as const,
  list: (projectId: number, args: Record<string, unknown>) => ['project', projectId, 'scorers', 'list', args] as const,
  one: (projectId: number, scorerId: number) => ['project', projectId, 'scorers', 'one', scorerId] as const,
  kinds: (projectId: number) => ['project', projectId, 'scorer-kinds'] as const,
};

/** Every kind with its params JSON Schema; `available` is for this project. */
export function useScorerKinds(projectId: number) {
  return useQuery({
    queryKey: keys.kinds(projectId),
    queryFn: ({ signal }) => unwrap(api.GET('/api/scorer-kinds', { params: { query: { project_id: projectId } }, signal })),
    staleTime: 60_000,
  });
}

export function useScorers(projectId: number, page: number, kind: string, includeArchived: boolean) {
  return useQuery({
    queryKey: keys.list(projectId, { page, kind, includeArchived }),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/scorers', {
          params: {
            path: { project_id: projectId },
            query: { page, page_size: PAGE_SIZE, include_archived: includeArchived, ...(kind ? { kind } : {}) },
          },
          signal,
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useScorer(projectId: number, scorerId: number | null) {
  return useQuery({
    queryKey: keys.one(projectId, scorerId ?? 0),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/projects/{project_id}/scorers/{scorer_id}', {
          params: { path: { project_id: projectId, scorer_id: scorerId ?? 0 } },
          signal,
        }),
      ),
    enabled: scorerId !== null,
  });
}

function useScorerMutation<V, R>(projectId: number, fn: (v: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.all(projectId) }),
  });
}

export function useCreateScorer(projectId: number) {
  return useScorerMutation(projectId, (body: Draft<ScorerCreateBody>) =>
    unwrap(api.POST('/api/projects/{project_id}/scorers', { params: { path: { project_id: projectId } }, body: asBody(body) })),
  );
}

export function useAddVersion(projectId: number) {
  // Based on the scorer's `version` (row_version): 412 when someone saved a version meanwhile.
  return useScorerMutation(projectId, ({ id, params, note, version }: { id: number; params: Params; note: string | null; version?: number | null }) =>
    unwrap(
      api.POST('/api/projects/{project_id}/scorers/{scorer_id}/versions', {
        params: { path: { project_id: projectId, scorer_id: id } },
        body: { params, note },
        headers: ifMatch(version),
      }),
    ),
  );
}

export function useArchiveScorer(projectId: number) {
  return useScorerMutation(projectId, ({ id, archive }: { id: number; archive: boolean }) => {
    const init = { params: { path: { project_id: projectId, scorer_id: id } } };
    return unwrap(
      archive
        ? api.POST('/api/projects/{project_id}/scorers/{scorer_id}/archive', init)
        : api.POST('/api/projects/{project_id}/scorers/{scorer_id}/restore', init),
    );
  });
}

export function usePreview(projectId: number) {
  return useMutation({
    mutationFn: (body: Draft<PreviewBody>) =>
      unwrap(api.POST('/api/projects/{project_id}/scorers/preview', { params: { path: { project_id: projectId } }, body: asBody(body) })),
  });
}

export function useTryScorer(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Draft<TryBody>) =>
      unwrap(api.POST('/api/projects/{project_id}/scorers/try', { params: { path: { project_id: projectId } }, body: asBody(body) })),
    // The judges' cost is now in the project's spend.
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['project', projectId] }),
  });
}
