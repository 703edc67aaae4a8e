import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '@/api/client';
import { ifMatch } from '@/api/errors';
import type { Attempt, AttemptBody, Challenge, Tab, TargetSet } from '../types';

export const arenaKeys = {
  all: ['arena'] as const,
  list: (q: string) => ['arena', 'list', q] as const,
  one: (id: string) => ['arena', 'challenge', id] as const,
  attempts: (id: string, tab: Tab, set: TargetSet) => ['arena', 'challenge', id, 'attempts', tab, set] as const,
};

const path = (challengeId: string) => ({ path: { challenge_id: challengeId } });

export function useChallenges(q: string) {
  return useQuery({
    queryKey: arenaKeys.list(q),
    queryFn: ({ signal }) => unwrap(api.GET('/api/arena/challenges', { params: { query: q ? { q } : {} }, signal })),
    placeholderData: keepPreviousData,
  });
}

export function useChallenge(id: string) {
  return useQuery({
    queryKey: arenaKeys.one(id),
    queryFn: ({ signal }) => unwrap(api.GET('/api/arena/challenges/{challenge_id}', { params: path(id), signal })),
    // Its drafts are the server's copy of what the editor holds: never refetch over it.
    staleTime: Infinity,
  });
}

export function useSaveDraft(id: string) {
  return useMutation({
    /** Based on the draft's `version` (0: never saved): a save from a stale tab or window is refused (412). */
    mutationFn: ({ tab, text, version }: { tab: Tab; text: string; version: number | null }) =>
      unwrap(api.PUT('/api/arena/challenges/{challenge_id}/drafts/{tab}', { params: { path: { challenge_id: id, tab } }, body: { text }, headers: ifMatch(version) })),
  });
}

export function useValidation(id: string, tab: Tab, text: string, enabled: boolean) {
  return useQuery({
    queryKey: ['arena', 'challenge', id, 'validate', tab, text],
    queryFn: ({ signal }) => unwrap(api.POST('/api/arena/challenges/{challenge_id}/validate', { params: path(id), body: { tab, text }, signal })),
    enabled,
    staleTime: Infinity,
    placeholderData: keepPreviousData,
  });
}

/** Reveals a tab's hint (the server records it); the challenge then carries it. */
export function useRevealHint(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tab: Tab) => unwrap(api.POST('/api/arena/challenges/{challenge_id}/hints/{tab}', { params: { path: { challenge_id: id, tab } } })),
    onSuccess: (hint) =>
      queryClient.setQueryData<Challenge>(arenaKeys.one(id), (c) =>
        c ? { ...c, tabs: { ...c.tabs, [hint.tab]: { ...c.tabs[hint.tab], hint: hint.hint } } } : c,
      ),
  });
}

/** The caller's latest attempt of one tab and set ("the last run"), or null. */
export function useLatestAttempt(id: string, tab: Tab, set: TargetSet) {
  return useQuery({
    queryKey: arenaKeys.attempts(id, tab, set),
    queryFn: async ({ signal }) => {
      const page = await unwrap(
        api.GET('/api/arena/challenges/{challenge_id}/attempts', { params: { ...path(id), query: { tab, set, page: 1, page_size: 1 } }, signal }),
      );
      return page.items[0] ?? null;
    },
  });
}

export function useRunAttempt(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AttemptBody) => unwrap(api.POST('/api/arena/challenges/{challenge_id}/attempts', { params: path(id), body })),
    onSuccess: (attempt: Attempt) => {
      queryClient.setQueryData(arenaKeys.attempts(id, attempt.tab, attempt.set), attempt);
      // The library's badges and the tabs' Dev/Prod ready follow the latest runs.
      void queryClient.invalidateQueries({ queryKey: arenaKeys.list('').slice(0, 2) });
    },
  });
}
