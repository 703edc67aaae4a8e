import { useCallback, useEffect, useState } from 'react';

const MAX_KEPT = 200;

/** Where a reviewer's undo stack of one run is kept: per tab (sessionStorage), so it survives a reload. */
export const undoKey = (projectId: number, runId: number, userId: number, where: 'review' | 'grid' = 'review') =>
  `assay:${where}-undo:${projectId}:${runId}:${userId}`;

function load<T>(key: string | null): T[] {
  if (!key) return [];
  try {
    const found: unknown = JSON.parse(sessionStorage.getItem(key) ?? '[]');
    return Array.isArray(found) ? (found as T[]) : [];
  } catch {
    return [];
  }
}

/**
 * The undo stack of a reviewer's scores, kept in sessionStorage under `key` (null while the
 * reviewer is not known yet: kept in memory) so that undo still works after a reload.
 * `stored()` reads what a reload would read: another mounted copy may have written since.
 */
export function useUndoStack<T>(key: string | null) {
  const [stack, setStack] = useState<T[]>(() => load<T>(key));
  useEffect(() => setStack(load<T>(key)), [key]);
  const keep = useCallback(
    (next: T[]) => {
      const kept = next.slice(-MAX_KEPT);
      setStack(kept);
      if (key) {
        try {
          sessionStorage.setItem(key, JSON.stringify(kept));
        } catch {
          // storage full or blocked: undo still works until the page is left
        }
      }
    },
    [key],
  );
  const stored = useCallback(() => (key ? load<T>(key) : stack), [key, stack]);
  return { stack, keep, stored };
}
