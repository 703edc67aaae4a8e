import { useCallback, useRef, useState } from 'react';
import { isApiError, isStaleWrite, type ApiError } from '@/api/errors';

/** A save refused because the score changed elsewhere (another tab) since it was read. */
export interface StaleSave {
  error: ApiError;
  /** What was refused, for the notice. */
  label: string;
  /** Saves it anyway, over the newer score: the reviewer chose to. */
  keepMine: () => Promise<unknown>;
}

/**
 * One score save at a time (a key pressed again while one is in flight is ignored), its
 * outcome for the screen (`saved`, `error` or `stale`), and `refresh` after each, failed or
 * not. A stale save (412) overwrites nothing: `stale` holds it until the reviewer reloads
 * (`dismissStale`) or keeps theirs (`stale.keepMine`, which `onStale` builds).
 */
export function useSerialSave(refresh: () => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [stale, setStale] = useState<StaleSave | null>(null);
  const busyRef = useRef(false);

  const run = useCallback(
    async (work: () => Promise<unknown>, done: string, onStale?: (e: ApiError) => () => Promise<unknown>) => {
      if (busyRef.current) return false;
      busyRef.current = true;
      setBusy(true);
      setError(null);
      setStale(null);
      try {
        await work();
        setSaved(done);
        return true;
      } catch (e) {
        if (isStaleWrite(e) && onStale) {
          setSaved(null);
          setStale({ error: e, label: done, keepMine: onStale(e) });
        } else setError(messageOf(e));
        return false;
      } finally {
        // The next key is based on the versions the refreshed grid shows: refresh first.
        await refresh().catch(() => undefined);
        busyRef.current = false;
        setBusy(false);
      }
    },
    [refresh],
  );

  /** Says why a key did not score (e.g. the output has no reply). */
  const refuse = useCallback((message: string) => {
    setSaved(null);
    setError(message);
  }, []);

  /** Reload: drop the refused save and show what is stored now. */
  const dismissStale = useCallback(() => {
    setStale(null);
    void refresh();
  }, [refresh]);

  return { run, refuse, busy, error, saved, stale, dismissStale };
}

/** The versions of the reviewer's scores that a refusal reports (one, or one per output). */
export function currentVersions(e: ApiError, count: number): number[] {
  if (Array.isArray(e.current)) return e.current.map((s) => (s && typeof s === 'object' && 'row_version' in s ? Number((s as { row_version: number }).row_version) : 0));
  return Array.from({ length: count }, () => e.currentVersion ?? 0);
}

function messageOf(e: unknown): string {
  if (isApiError(e)) {
    const details = Object.values((e.errors ?? {}) as Record<string, unknown>)
      .flatMap((v) => (typeof v === 'object' && v !== null ? Object.values(v as Record<string, unknown>) : [v]))
      .flat()
      .filter((m): m is string => typeof m === 'string');
    return details.length ? `${e.message}: ${details.join('; ')}` : e.message;
  }
  return e instanceof Error ? e.message : 'Could not save the score';
}
