import { useEffect, useState } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { qk } from './queryKeys';
import type { Run, RunStatus } from './types';

export const RUN_EVENT_TYPES = ['run.started', 'run.progress', 'run.finished'] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** The data of one progress event (DESIGN.md §4 "Progress"). */
export interface RunEvent {
  type: RunEventType;
  run_id: number;
  status: RunStatus;
  total: number;
  succeeded: number;
  failed: number;
  at: string;
}

export type StreamState = 'idle' | 'connecting' | 'open' | 'closed' | 'error' | 'unsupported';

/** The part of the EventSource constructor the hook uses; tests inject a fake. */
export type EventSourceLike = {
  readonly readyState: number;
  onopen: ((ev: Event) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
};
export type EventSourceCtor = new (url: string, init?: EventSourceInit) => EventSourceLike;

const CLOSED = 2;

export function runEventsUrl(projectId: number, runId: number) {
  return `/api/projects/${projectId}/runs/${runId}/events`;
}

export function parseRunEvent(ev: MessageEvent): RunEvent | null {
  try {
    const data = JSON.parse(String(ev.data)) as Partial<RunEvent>;
    if (typeof data !== 'object' || data === null) return null;
    const type = (RUN_EVENT_TYPES as readonly string[]).includes(ev.type) ? (ev.type as RunEventType) : data.type;
    if (!type || !(RUN_EVENT_TYPES as readonly string[]).includes(type)) return null;
    if (typeof data.total !== 'number' || typeof data.succeeded !== 'number' || typeof data.failed !== 'number') {
      return null;
    }
    return { ...data, type } as RunEvent;
  } catch {
    return null;
  }
}

/** Writes one event into the cached run. Never moves counters backwards. */
export function applyRunEvent(queryClient: QueryClient, projectId: number, runId: number, event: RunEvent) {
  const key = qk.run(projectId, runId);
  const old = queryClient.getQueryData<Run>(key);
  if (!old) {
    void queryClient.invalidateQueries({ queryKey: key, exact: true });
    return;
  }
  const finished = event.type === 'run.finished';
  const oldDone = old.succeeded + old.failed;
  const newDone = event.succeeded + event.failed;
  if (!finished && newDone < oldDone) return; // a late, older event
  queryClient.setQueryData<Run>(key, {
    ...old,
    status: event.status ?? old.status,
    total: event.total,
    succeeded: event.succeeded,
    failed: event.failed,
    started_at: old.started_at ?? (event.type === 'run.started' ? event.at : old.started_at),
    finished_at: finished ? (old.finished_at ?? event.at) : old.finished_at,
  });
}

/**
 * Follows a run's Server-Sent Events: each event updates the cached run
 * (setQueryData) and invalidates its outputs list; the stream is closed on
 * run.finished. The browser's EventSource resends Last-Event-ID on reconnect.
 */
export function useEventStream(
  projectId: number,
  runId: number,
  options: { enabled?: boolean; EventSourceImpl?: EventSourceCtor; onEvent?: (e: RunEvent) => void } = {},
) {
  const { enabled = true, EventSourceImpl, onEvent } = options;
  const queryClient = useQueryClient();
  const [state, setState] = useState<StreamState>('idle');
  const [lastEvent, setLastEvent] = useState<RunEvent | null>(null);

  useEffect(() => {
    if (!enabled) {
      setState('idle');
      return;
    }
    const Impl =
      EventSourceImpl ?? (globalThis as unknown as { EventSource?: EventSourceCtor }).EventSource ?? undefined;
    if (!Impl) {
      setState('unsupported');
      return;
    }
    let finished = false;
    const source = new Impl(runEventsUrl(projectId, runId), { withCredentials: true });
    setState('connecting');
    source.onopen = () => setState('open');
    source.onerror = () => {
      if (finished) return;
      // CONNECTING: the browser retries by itself; CLOSED: it gave up.
      setState(source.readyState === CLOSED ? 'error' : 'connecting');
    };
    const handle = (ev: MessageEvent) => {
      const event = parseRunEvent(ev);
      if (!event || finished) return;
      applyRunEvent(queryClient, projectId, runId, event);
      setLastEvent(event);
      onEvent?.(event);
      if (event.type === 'run.finished') {
        finished = true;
        source.close();
        setState('closed');
        void queryClient.invalidateQueries({ queryKey: qk.run(projectId, runId) });
        void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
      } else {
        void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) }, { cancelRefetch: false });
      }
    };
    for (const type of RUN_EVENT_TYPES) source.addEventListener(type, handle);
    source.addEventListener('message', handle);
    return () => {
      finished = true;
      source.close();
    };
    // onEvent is deliberately not a dependency: a new callback must not reconnect.
  }, [projectId, runId, enabled, EventSourceImpl, queryClient]);

  return { state, lastEvent };
}
