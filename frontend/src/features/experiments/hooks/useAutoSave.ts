import { useEffect, useRef, useState } from 'react';

export type SaveState = 'idle' | 'pending' | 'saving' | 'saved' | 'error';

/**
 * Saves `value` with `save` once it has been unchanged for `delayMs` (a debounced PATCH), and
 * at once on `flush()` (before Continue or leaving). Only changes after `armed` count.
 */
export function useAutoSave<T>(value: T, save: (v: T) => Promise<unknown>, { delayMs = 800, armed = true }: { delayMs?: number; armed?: boolean } = {}) {
  const [state, setState] = useState<SaveState>('idle');
  const saved = useRef<string | null>(null);
  const saveRef = useRef(save);
  saveRef.current = save;
  const latest = useRef(value);
  latest.current = value;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const flush = async () => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    const snapshot = JSON.stringify(latest.current);
    if (snapshot === saved.current) return;
    setState('saving');
    try {
      await saveRef.current(latest.current);
      saved.current = snapshot;
      setState('saved');
    } catch (e) {
      setState('error');
      throw e;
    }
  };

  /** Marks the current value as what the server holds (after loading a draft). */
  const baseline = (v: T) => {
    saved.current = JSON.stringify(v);
  };

  useEffect(() => {
    if (!armed) return;
    if (JSON.stringify(value) === saved.current) return;
    setState('pending');
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => void flush().catch(() => undefined), delayMs);
    return () => {
      if (timer.current) clearTimeout(timer.current);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [JSON.stringify(value), armed, delayMs]);

  return { state, flush, baseline };
}
