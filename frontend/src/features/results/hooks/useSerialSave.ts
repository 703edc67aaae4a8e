import { useCallback, useRef, useState } from 'react';
import { isApiError } from '@/api/errors';

/**
 * One score save at a time (a key pressed again while one is in flight is ignored), its
 * outcome for the screen (`saved` or `error`), and `refresh` after each, failed or not.
 */
export function useSerialSave(refresh: () => Promise<unknown>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const busyRef = useRef(false);

  const run = useCallback(
    async (work: () => Promise<unknown>, done: string) => {
      if (busyRef.current) return false;
      busyRef.current = true;
      setBusy(true);
      setError(null);
      try {
        await work();
        setSaved(done);
        return true;
      } catch (e) {
        setError(messageOf(e));
        return false;
      } finally {
        busyRef.current = false;
        setBusy(false);
        await refresh();
      }
    },
    [refresh],
  );

  /** Says why a key did not score (e.g. the output has no reply). */
  const refuse = useCallback((message: string) => {
    setSaved(null);
    setError(message);
  }, []);

  return { run, refuse, busy, error, saved };
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
