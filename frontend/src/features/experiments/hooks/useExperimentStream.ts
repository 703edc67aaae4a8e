import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { EventSourceCtor, StreamState } from '@/api/useEventStream';
import { experimentPath, type Progress } from '../api';
import { expKeys } from './useExperiments';

/** The experiment stream's event types (api/iterations/routes.py events). */
export const EXPERIMENT_EVENT_TYPES = ['experiment.progress', 'experiment.finished'] as const;

/** The Progress snapshot an event carries, or null when it is not one. */
export function parseExperimentEvent(ev: MessageEvent): Progress | null {
  try {
    const data = JSON.parse(String(ev.data)) as unknown;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
    const p = data as Partial<Progress>;
    if (typeof p.experiment_id !== 'number' || typeof p.status !== 'string' || typeof p.spent_micros !== 'number') return null;
    return p as Progress;
  } catch {
    return null;
  }
}

/**
 * Follows an experiment's Server-Sent Events (the browser resends Last-Event-ID on
 * reconnect): each snapshot is written into the cached progress, and the experiment and its
 * iterations refresh when the phase or iteration changes. `polling`: the stream is down,
 * callers poll GET /progress instead.
 */
export function useExperimentStream(projectId: number, experimentId: number, { enabled = true, EventSourceImpl }: { enabled?: boolean; EventSourceImpl?: EventSourceCtor } = {}) {
  const qc = useQueryClient();
  const [state, setState] = useState<StreamState>('idle');

  useEffect(() => {
    if (!enabled) {
      setState('idle');
      return;
    }
    const Impl = EventSourceImpl ?? (globalThis as unknown as { EventSource?: EventSourceCtor }).EventSource;
    if (!Impl) {
      setState('unsupported');
      return;
    }
    let finished = false;
    const source = new Impl(`${experimentPath(projectId, experimentId)}/events`, { withCredentials: true });
    setState('connecting');
    source.onopen = () => setState('open');
    source.onerror = () => {
      if (!finished) setState(source.readyState === 2 ? 'error' : 'reconnecting');
    };
    const handle = (ev: MessageEvent) => {
      const p = parseExperimentEvent(ev);
      if (!p || finished) return;
      const key = expKeys.progress(projectId, experimentId);
      const old = qc.getQueryData<Progress>(key);
      qc.setQueryData(key, p);
      const moved =
        !old || old.status !== p.status || old.iteration?.number !== p.iteration?.number || old.iteration?.phase !== p.iteration?.phase || old.iteration?.paused !== p.iteration?.paused || p.ended;
      if (moved) {
        void qc.invalidateQueries({ queryKey: expKeys.one(projectId, experimentId) });
      }
      if (p.ended || ev.type === 'experiment.finished') {
        finished = true;
        source.close();
        setState('closed');
      }
    };
    for (const t of EXPERIMENT_EVENT_TYPES) source.addEventListener(t, handle);
    source.addEventListener('message', handle);
    return () => {
      finished = true;
      source.close();
    };
  }, [projectId, experimentId, enabled, EventSourceImpl, qc]);

  return { state, polling: state === 'error' || state === 'unsupported' || state === 'reconnecting' };
}
