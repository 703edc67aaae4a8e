import { keepPreviousData, useQueries, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useCallback, useMemo, useRef } from 'react';
import { isApiError } from '@/api/errors';
import { request } from '@/features/datasets/api';
import type { Run } from '@/features/runs/api';
import {
  deleteScore,
  fetchGrid,
  fetchManualScorers,
  gridQuery,
  putScore,
  type GridFilters,
  type GridOutput,
  type GridPage,
  type ManualScoreBody,
  type Scorer,
} from '../api';
import { useSerialSave } from './useSerialSave';
import { undoKey, useUndoStack } from './useUndoStack';

/** Rows fetched per request as the grid scrolls. */
export const GRID_PAGE_SIZE = 100;

export const gridKeyAll = (projectId: number, runId: number) => ['project', projectId, 'run', runId, 'grid'] as const;
const gridKey = (projectId: number, runId: number, filters: GridFilters, page: number): QueryKey => [
  ...gridKeyAll(projectId, runId),
  filters,
  page,
];

export function gridPageQuery(projectId: number, runId: number, filters: GridFilters, page: number, enabled = true) {
  return {
    queryKey: gridKey(projectId, runId, filters, page),
    queryFn: ({ signal }: { signal: AbortSignal }) =>
      fetchGrid(projectId, runId, gridQuery(filters, (page - 1) * GRID_PAGE_SIZE, GRID_PAGE_SIZE), signal),
    enabled,
    staleTime: 15_000,
  };
}

/**
 * The grid's rows, a page of GRID_PAGE_SIZE at a time: the first page gives the total and
 * the columns; `pagesFor(first, last)` fetches only the pages the rows in view fall on.
 */
export function useGridPages(projectId: number, runId: number, filters: GridFilters, visible: [number, number], enabled = true) {
  const first = useQuery({ ...gridPageQuery(projectId, runId, filters, 1, enabled), placeholderData: keepPreviousData });
  const firstPage = Math.floor(visible[0] / GRID_PAGE_SIZE) + 1;
  const lastPage = Math.floor(Math.max(visible[0], visible[1]) / GRID_PAGE_SIZE) + 1;
  const numbers: number[] = [];
  for (let p = Math.max(2, firstPage); p <= lastPage; p++) numbers.push(p);
  const total = first.data?.total ?? 0;
  const pages = useQueries({
    queries: numbers.map((p) => gridPageQuery(projectId, runId, filters, p, enabled && (p - 1) * GRID_PAGE_SIZE < total)),
  });
  const rowAt = (index: number) => {
    const p = Math.floor(index / GRID_PAGE_SIZE) + 1;
    const data: GridPage | undefined = p === 1 ? first.data : pages[numbers.indexOf(p)]?.data;
    return data?.rows[index - (p - 1) * GRID_PAGE_SIZE];
  };
  return { first, total, rowAt };
}

export interface ScoringChoice {
  scorerId: number;
  versionId: number;
  name: string;
  scale: string;
  criteria: string[];
  pinned: boolean;
}

/**
 * The manual scorers a reviewer can score this run with: the ones the run pinned (at their
 * pinned version) first, then every other manual scorer of the project (at its newest
 * version) — the API takes any manual scorer of the project.
 */
export function useScoringChoices(projectId: number, run: Run | undefined) {
  const list = useQuery({
    queryKey: ['project', projectId, 'scorers', 'manual'],
    queryFn: ({ signal }) => fetchManualScorers(projectId, signal),
    staleTime: 60_000,
  });
  const pinned = (run?.scorers ?? []).filter((s) => s.kind === 'manual');
  const details = useQueries({
    queries: pinned.map((p) => ({
      queryKey: ['project', projectId, 'scorers', 'detail', p.scorer_id],
      queryFn: ({ signal }: { signal: AbortSignal }) =>
        request<Scorer & { versions: Scorer['latest'][] }>('GET', `/api/projects/${projectId}/scorers/${p.scorer_id}`, { signal }),
      staleTime: 60_000,
    })),
  });
  const choices = useMemo(() => {
    const out: ScoringChoice[] = [];
    pinned.forEach((p, i) => {
      const detail = details[i]?.data;
      if (!detail || detail.archived_at) return;
      const version = detail.versions.find((v) => v.id === p.scorer_version_id) ?? detail.latest;
      out.push(choiceOf(detail, version, true));
    });
    for (const s of list.data?.items ?? []) {
      if (s.archived_at || out.some((c) => c.scorerId === s.id)) continue;
      out.push(choiceOf(s, s.latest, false));
    }
    return out;
  }, [list.data, JSON.stringify(details.map((d) => d.data?.id ?? null)), run?.scorers]);
  const isPending = list.isPending || details.some((d) => d.isPending);
  return { choices, isPending, error: list.error ?? details.find((d) => d.error)?.error ?? null, refetch: list.refetch };
}

function choiceOf(s: Scorer, version: Scorer['latest'], pinned: boolean): ScoringChoice {
  const params = (version.params ?? {}) as { scale?: string; criteria?: string[] };
  return {
    scorerId: s.id,
    versionId: version.id,
    name: s.name,
    scale: params.scale ?? '1-5',
    criteria: params.criteria ?? [],
    pinned,
  };
}

/** What a key press enters on a scale, or null when the key means nothing there. */
export function entryForKey(key: string, scale: string, current: Entered | null): ManualScoreBody | null {
  if (scale === 'pass_fail') {
    if (key === '.') return { passed: true };
    if (key === ',') return { passed: false };
    return null;
  }
  if (scale === '1-5') {
    if (/^[1-5]$/.test(key)) return { rating: Number(key), ...(current?.passed != null ? { passed: current.passed } : {}) };
    // Approve / reject on a rating scale: keep the rating given (else 5 / 1) and mark it.
    if (key === '.') return { rating: current?.rating ?? 5, passed: true };
    if (key === ',') return { rating: current?.rating ?? 1, passed: false };
  }
  return null;
}

export interface Entered {
  rating: number | null;
  passed: boolean | null;
}

/** The signed-in reviewer's score of this output by this scorer version, if any. */
export function myScore(output: GridOutput, versionId: number, userId: number | undefined) {
  return output.scores.find((s) => s.scorer_version_id === versionId && s.kind === 'manual' && s.author_id === userId) ?? null;
}

export interface ScoreAction {
  outputId: number;
  versionId: number;
  before: Entered | null;
  /** The row_version of the reviewer's score it was based on (0: none); `saved`: after it, for undo. */
  version?: number;
  saved?: number;
  after: ManualScoreBody;
  label: string;
}

/**
 * Saves a reviewer's scores at once and undoes them, last first: undo restores the value
 * the output had before (PUT) or removes the score when it had none (DELETE).
 */
export function useManualScoring(projectId: number, runId: number, userId: number | undefined) {
  const queryClient = useQueryClient();
  // Kept per tab, run and reviewer, so undo still works after a reload (as in review mode).
  const { stack, keep, stored } = useUndoStack<ScoreAction>(userId === undefined ? null : undoKey(projectId, runId, userId, 'grid'));
  const refresh = useCallback(
    () => queryClient.invalidateQueries({ queryKey: gridKeyAll(projectId, runId) }),
    [queryClient, projectId, runId],
  );

  const { run, refuse, busy, error, saved, stale, dismissStale } = useSerialSave(refresh);
  // Keep mine runs the save (or undo) again, based on the version the refusal reported.
  const scoreRef = useRef<(a: ScoreAction) => Promise<boolean>>(async () => false);
  const undoRef = useRef<(checked: boolean) => Promise<ScoreAction | null>>(async () => null);

  const score = useCallback(
    async (action: ScoreAction) => {
      let after: number | undefined;
      const ok = await run(
        async () => {
          after = (await putScore(projectId, runId, action.outputId, action.versionId, action.after, action.version)).row_version;
        },
        `Saved: ${action.label}`,
        (e) => () => scoreRef.current({ ...action, version: e.currentVersion ?? 0 }),
      );
      if (ok) keep([...stored(), { ...action, saved: after }]);
      return ok;
    },
    [run, keep, stored, projectId, runId],
  );
  scoreRef.current = score;

  const undoLast = useCallback(async (checked: boolean): Promise<ScoreAction | null> => {
    const current = stored(); // what a reload reads back
    const last = current[current.length - 1];
    if (!last) return null;
    const based = checked ? last.saved : undefined;
    const ok = await run(
      () =>
        last.before
          ? putScore(projectId, runId, last.outputId, last.versionId, restoreBody(last.before), based)
          : deleteScore(projectId, runId, last.outputId, last.versionId, based).catch((e: unknown) => {
              // Already gone on the server (removed elsewhere): what undo wanted holds.
              if (!(isApiError(e) && e.status === 404)) throw e;
            }),
      `Undone: ${last.label}`,
      checked ? () => () => undoRef.current(false) : undefined,
    );
    if (!ok) return null;
    keep(current.slice(0, -1));
    return last;
  }, [stored, keep, run, projectId, runId]);
  undoRef.current = undoLast;
  const undo = useCallback(() => undoLast(true), [undoLast]);

  return { score, undo, refuse, canUndo: stack.length > 0 && !busy, busy, error, saved, stale, dismissStale, lastAction: stack[stack.length - 1] ?? null };
}

function restoreBody(before: Entered): ManualScoreBody {
  const body: ManualScoreBody = {};
  if (before.rating !== null) body.rating = before.rating;
  if (before.passed !== null) body.passed = before.passed;
  return body;
}


export function describeEntry(entry: ManualScoreBody): string {
  const parts: string[] = [];
  if (entry.rating != null) parts.push(`rating ${entry.rating}`);
  if (entry.passed === true) parts.push('pass');
  if (entry.passed === false) parts.push('fail');
  return parts.join(', ') || 'score';
}
