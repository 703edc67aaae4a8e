import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef } from 'react';
import { isApiError } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { api, unwrap } from '@/api/client';
import { deleteScore, putScore, type ManualScoreBody } from '../api';
import { gridKeyAll } from './useGrid';
import { currentVersions, useSerialSave } from './useSerialSave';
import { undoKey, useUndoStack } from './useUndoStack';

export { undoKey };

/** What a reviewer had entered on an output before a key changed it (null: no score). */
export interface Before {
  rating: number | null;
  passed: boolean | null;
  criteria: Record<string, number>;
}

/** One key press: the same score on every output of a cell (its repeats). */
export interface ReviewAction {
  versionId: number;
  /** `version`: the row_version of the reviewer's score the key was based on (0: none);
   * `saved`: its version after the save, what undo is based on. Unknown: no check. */
  outputs: Array<{ outputId: number; before: Before | null; version?: number; saved?: number }>;
  after: ManualScoreBody;
  label: string;
  /** Where it was scored, to go back there on undo. */
  row: number;
  item: number;
}

/** The same score on several outputs at once (a cell's repeats), all or none. */
function putScores(projectId: number, runId: number, versionId: number, outputIds: number[], body: ManualScoreBody, versions?: number[]) {
  return unwrap(
    api.PUT('/api/projects/{project_id}/runs/{run_id}/scores/{scorer_version_id}', {
      params: { path: { project_id: projectId, run_id: runId, scorer_version_id: versionId } },
      body: { ...body, output_ids: outputIds, ...(versions ? { row_versions: versions } : {}) },
    }),
  );
}
function restoreBody(before: Before): ManualScoreBody {
  const body: ManualScoreBody = {};
  if (before.rating !== null) body.rating = before.rating;
  if (before.passed !== null) body.passed = before.passed;
  if (Object.keys(before.criteria).length) body.criteria = before.criteria;
  return body;
}


/**
 * Review mode's scores, saved at once, and their undo stack. The stack is kept in
 * sessionStorage per run and reviewer, so undo still works after a reload; undoing puts
 * back on the server what each output had before (PUT) or removes the score (DELETE), for
 * every output the key scored.
 */
export function useReviewScoring(projectId: number, runId: number, userId: number | undefined) {
  const queryClient = useQueryClient();
  const key = userId === undefined ? null : undoKey(projectId, runId, userId);
  const { stack, keep, stored } = useUndoStack<ReviewAction>(key);

  const refresh = useCallback(
    () => Promise.all([
      queryClient.invalidateQueries({ queryKey: gridKeyAll(projectId, runId) }),
      queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) }),
    ]),
    [queryClient, projectId, runId],
  );
  const { run, busy, error, saved, stale, dismissStale } = useSerialSave(refresh);
  // Keep mine runs the save again, based on the versions the refusal reported.
  const scoreRef = useRef<(a: ReviewAction) => Promise<boolean>>(async () => false);
  const undoRef = useRef<(checked: boolean) => Promise<ReviewAction | null>>(async () => null);

  const score = useCallback(
    async (action: ReviewAction) => {
      const ids = action.outputs.map((o) => o.outputId);
      const based = action.outputs.map((o) => o.version);
      const known = based.every((v) => v !== undefined) ? (based as number[]) : undefined;
      let after: number[] = [];
      const ok = await run(
        async () => {
          if (ids.length === 1) after = [(await putScore(projectId, runId, ids[0], action.versionId, action.after, based[0])).row_version];
          else after = (await putScores(projectId, runId, action.versionId, ids, action.after, known)).items.map((s) => s.row_version);
        },
        `Saved: ${action.label}`,
        (e) => () => {
          const now = currentVersions(e, ids.length);
          return scoreRef.current({ ...action, outputs: action.outputs.map((o, i) => ({ ...o, version: now[i] ?? 0 })) });
        },
      );
      const done = { ...action, outputs: action.outputs.map((o, i) => ({ ...o, saved: after[i] })) };
      if (ok) keep([...stored(), done]);
      return ok;
    },
    [run, keep, stored, projectId, runId],
  );
  scoreRef.current = score;

  /** `checked`: based on the versions this tab saved, so a score changed elsewhere since is not undone (412). */
  const undoLast = useCallback(async (checked: boolean): Promise<ReviewAction | null> => {
    // The stored stack is the one a reload reads back: undo from it.
    const current = stored();
    const last = current[current.length - 1];
    if (!last) return null;
    const ok = await run(
      async () => {
        for (const o of last.outputs) {
          const based = checked ? o.saved : undefined;
          if (o.before) await putScore(projectId, runId, o.outputId, last.versionId, restoreBody(o.before), based);
          else {
            try {
              await deleteScore(projectId, runId, o.outputId, last.versionId, based);
            } catch (e) {
              // Already gone on the server (removed elsewhere): what undo wanted holds.
              if (!(isApiError(e) && e.status === 404)) throw e;
            }
          }
        }
      },
      `Undone: ${last.label}`,
      checked ? () => () => undoRef.current(false) : undefined,
    );
    if (!ok) return null;
    keep(current.slice(0, -1));
    return last;
  }, [stored, run, keep, projectId, runId]);
  undoRef.current = undoLast;
  const undo = useCallback(() => undoLast(true), [undoLast]);

  return { score, undo, canUndo: stack.length > 0 && !busy, busy, error, saved, stale, dismissStale, depth: stack.length };
}
