import { useEffect, useRef, useState } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { qk } from './queryKeys';
import type { RunStatus } from './types';
import type { Progress, Run } from '@/features/runs/api';

export const RUN_EVENT_TYPES = ['run.started', 'run.progress', 'run.status', 'run.budget_alert', 'run.finished'] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/** One event of a run's stream: its type and the Progress payload (the same as GET /progress). */
export interface RunEvent {
  type: RunEventType;
  progress: Progress;
}

/**
 * idle: not following; connecting: first connection; open: live; reconnecting: the
 * connection dropped and the browser retries; error: the browser gave up; closed: the run
 * finished; unsupported: no EventSource.
 */
export type StreamState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed' | 'error' | 'unsupported';

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

const isEventType = (t: unknown): t is RunEventType => (RUN_EVENT_TYPES as readonly unknown[]).includes(t);

export function parseRunEvent(ev: MessageEvent): RunEvent | null {
  try {
    const data = JSON.parse(String(ev.data)) as Partial<Progress> & { type?: unknown };
    if (typeof data !== 'object' || data === null) return null;
    const type = isEventType(ev.type) ? ev.type : data.type;
    if (!isEventType(type)) return null;
    if (typeof data.total !== 'number' || typeof data.succeeded !== 'number' || typeof data.failed !== 'number') {
      return null;
    }
    const progress = {
      skipped: 0,
      errors: {},
      targets: [],
      ...data,
      done: typeof data.done === 'number' ? data.done : data.succeeded + data.failed,
    } as Progress;
    return { type, progress };
  } catch {
    return null;
  }
}

/**
 * Writes one event into the cached progress and run. A late run.progress event older than
 * what is cached (fewer cells done, same status) is ignored; status changes always apply
 * (a retry of failed cells legitimately lowers `done`).
 */
export function applyRunEvent(queryClient: QueryClient, projectId: number, runId: number, event: RunEvent) {
  const p = event.progress;
  const progressKey = qk.progress(projectId, runId);
  const oldProgress = queryClient.getQueryData<Progress>(progressKey);
  if (event.type === 'run.progress' && oldProgress && oldProgress.status === p.status && p.done < oldProgress.done) return;
  queryClient.setQueryData<Progress>(progressKey, p);

  const key = qk.run(projectId, runId);
  const old = queryClient.getQueryData<Run>(key);
  if (!old) {
    void queryClient.invalidateQueries({ queryKey: key, exact: true });
    return;
  }
  const byTarget = new Map(p.targets.map((t) => [t.target_id, t]));
  queryClient.setQueryData<Run>(key, {
    ...old,
    status: (p.status ?? old.status) as RunStatus,
    total: p.total,
    succeeded: p.succeeded,
    failed: p.failed,
    skipped: p.skipped ?? old.skipped,
    spent_micros: p.spent_micros ?? old.spent_micros,
    reserved_micros: p.reserved_micros ?? old.reserved_micros,
    tokens_in: p.tokens_in ?? old.tokens_in,
    tokens_out: p.tokens_out ?? old.tokens_out,
    error: p.error ?? old.error,
    started_at: p.started_at ?? old.started_at,
    finished_at: p.finished_at ?? old.finished_at,
    targets: (old.targets ?? []).map((t) => {
      const n = byTarget.get(t.id);
      return n
        ? { ...t, total: n.total, succeeded: n.succeeded, failed: n.failed, skipped: n.skipped, spent_micros: n.spent_micros, tokens_in: n.tokens_in, tokens_out: n.tokens_out }
        : t;
    }),
  });
}

/**
 * Follows a run's Server-Sent Events: each event updates the cached progress and run
 * (setQueryData) and invalidates its outputs and summary; the stream is closed on
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
  const onEventRef = useRef(onEvent);
  onEventRef.current = onEvent;

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
      setState(source.readyState === CLOSED ? 'error' : 'reconnecting');
    };
    const handle = (ev: MessageEvent) => {
      const event = parseRunEvent(ev);
      if (!event || finished) return;
      applyRunEvent(queryClient, projectId, runId, event);
      setLastEvent(event);
      onEventRef.current?.(event);
      if (event.type === 'run.finished') {
        finished = true;
        source.close();
        setState('closed');
        void queryClient.invalidateQueries({ queryKey: qk.run(projectId, runId) });
        void queryClient.invalidateQueries({ queryKey: qk.runsAll(projectId) });
        void queryClient.invalidateQueries({ queryKey: qk.summary(projectId, runId) });
        void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) });
      } else {
        void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) }, { cancelRefetch: false });
        void queryClient.invalidateQueries({ queryKey: qk.summary(projectId, runId) }, { cancelRefetch: false });
      }
    };
    for (const type of RUN_EVENT_TYPES) source.addEventListener(type, handle);
    source.addEventListener('message', handle);
    return () => {
      finished = true;
      source.close();
    };
  }, [projectId, runId, enabled, EventSourceImpl, queryClient]);

  return { state, lastEvent };
}
