import { useQueries } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import { request } from '@/features/datasets/api';
import type { OutputDetail } from '@/features/runs/api';
import type { GridOutput, GridRow } from '../api';
import { myScore } from './useGrid';
import type { Before } from './useReviewScoring';

/** What review mode shows and scores at once: a cell's outputs with a reply (its repeats). */
export interface ReviewItem {
  outputs: GridOutput[];
  label: string;
}

export function reviewItems(row: GridRow | undefined, labels: Map<number, string>): ReviewItem[] {
  if (!row) return [];
  return row.cells
    .map((c) => ({ outputs: c.outputs.filter((o) => o.status === 'succeeded'), label: labels.get(c.target_id) ?? '' }))
    .filter((item) => item.outputs.length > 0);
}

/** Whether the signed-in reviewer has scored every output of the item with this scorer version. */
export function scoredByMe(item: ReviewItem, versionId: number, userId: number | undefined): boolean {
  return item.outputs.every((o) => myScore(o, versionId, userId) !== null);
}

/** The full detail (text, every score with what was entered) of each output of the item. */
export function useItemDetails(projectId: number, runId: number, item: ReviewItem | undefined) {
  return useQueries({
    queries: (item?.outputs ?? []).map((o) => ({
      queryKey: [...qk.outputsAll(projectId, runId), 'detail', o.id] as const,
      queryFn: ({ signal }: { signal: AbortSignal }) => request<OutputDetail>('GET', `/api/projects/${projectId}/runs/${runId}/outputs/${o.id}`, { signal }),
    })),
  });
}

/**
 * What the reviewer had entered on the output by this scorer version (null: no score). The
 * grid says whether there is one and its rating; the output's detail adds the ratings per
 * criterion, once loaded.
 */
export function beforeOf(output: GridOutput, detail: OutputDetail | undefined, versionId: number, userId: number | undefined): Before | null {
  const mine = myScore(output, versionId, userId);
  if (!mine) return null;
  const own = detail?.scores.find((s) => s.scorer_version_id === versionId && s.kind === 'manual' && s.author_id === userId);
  const entered = ((own?.details ?? {}) as { entered?: { criteria?: Record<string, number> } }).entered;
  return { rating: mine.rating ?? null, passed: mine.passed ?? null, criteria: entered?.criteria ?? {} };
}

export const sameBefore = (a: Before | null, b: Before | null) => JSON.stringify(a) === JSON.stringify(b);
