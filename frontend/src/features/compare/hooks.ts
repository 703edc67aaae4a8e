import { useQuery } from '@tanstack/react-query';
import { request, runsPath, type Page, type Run } from '@/features/runs/api';
import { DIFF_PAGE_SIZE, diffPath, type Outcome, type RunDiff } from './api';

/** The most runs a picker lists: the newest 100 of the project (the API's largest page). */
export const PICKER_RUNS = 100;

export function useRunChoices(projectId: number) {
  return useQuery({
    queryKey: ['project', projectId, 'runs', 'choices'] as const,
    queryFn: ({ signal }) =>
      request<Page<Run>>('GET', runsPath(projectId), { query: { page: 1, page_size: PICKER_RUNS }, signal }),
  });
}

export interface DiffQuery {
  headId: number;
  baseId: number;
  scorerId: number | null;
  outcome: Outcome | '';
  page: number;
}

export function useRunDiff(projectId: number, q: DiffQuery, enabled: boolean) {
  return useQuery({
    queryKey: ['project', projectId, 'run', q.headId, 'diff', q] as const,
    queryFn: ({ signal }) =>
      request<RunDiff>('GET', diffPath(projectId, q.headId, q.baseId), {
        query: {
          page: q.page,
          page_size: DIFF_PAGE_SIZE,
          ...(q.scorerId ? { scorer_id: q.scorerId } : {}),
          ...(q.outcome ? { outcome: q.outcome } : {}),
        },
        signal,
      }),
    enabled,
    // Another page or outcome of the same two runs keeps the last answer on screen; another pair does not.
    placeholderData: (previous, previousQuery) => {
      const was = previousQuery?.queryKey[4] as DiffQuery | undefined;
      return was && was.headId === q.headId && was.baseId === q.baseId && was.scorerId === q.scorerId ? previous : undefined;
    },
  });
}
