import { useEffect, useRef, useState } from 'react';
import { isStaleWrite, type ApiError } from '@/api/errors';

export type SaveState = 'idle' | 'pending' | 'saving' | 'saved' | 'error' | 'conflict';

interface Options<T> {
  delayMs?: number;
  armed?: boolean;
  /** A save refused as stale (412): the page merges `error.current` or asks; nothing is retried until it does. */
  onStale?: (error: ApiError, lastSaved: T | null) => void;
}

/**
 * Saves `value` with `save` once it has been unchanged for `delayMs` (a debounced PATCH), and
 * at once on `flush()` (before Continue or leaving). Only changes after `armed` count. Saves
 * run one after another: two in flight would carry the same version and refuse each other.
 */
export function useAutoSave<T>(value: T, save: (v: T) => Promise<unknown>, { delayMs = 800, armed = true, onStale }: Options<T> = {}) {
  const [state, setState] = useState<SaveState>('idle');
  const saved = useRef<string | null>(null);
  const savedValue = useRef<T | null>(null);
  const saveRef = useRef(save);
  saveRef.current = save;
  const staleRef = useRef(onStale);
  staleRef.current = onStale;
  const latest = useRef(value);
  latest.current = value;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const chain = useRef<Promise<void>>(Promise.resolve());

  const cancel = () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
  };

  const run = async () => {
    const current = latest.current;
    const snapshot = JSON.stringify(current);
    if (snapshot === saved.current) return;
    setState('saving');
    try {
      await saveRef.current(current);
      saved.current = snapshot;
      savedValue.current = current;
      setState('saved');
    } catch (e) {
      if (isStaleWrite(e) && staleRef.current) {
        setState('conflict');
        staleRef.current(e, savedValue.current);
        return;
      }
      setState('error');
      throw e;
    }
  };

  const flush = () => {
    cancel();
    const next = chain.current.then(run);
    chain.current = next.catch(() => undefined);
    return next;
  };

  /** Marks `v` as what the server holds (after loading a draft, or merging a newer one). */
  const baseline = (v: T) => {
    saved.current = JSON.stringify(v);
    savedValue.current = v;
  };

  /** Resolves once no save is in flight (drops the one waiting for its delay). */
  const settle = () => {
    cancel();
    return chain.current;
  };

  useEffect(() => {
    if (!armed) return;
    if (JSON.stringify(value) === saved.current) return;
    setState('pending');
    cancel();
    timer.current = setTimeout(() => void flush().catch(() => undefined), delayMs);
    return cancel;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [JSON.stringify(value), armed, delayMs]);

  return { state, flush, baseline, settle };
}
