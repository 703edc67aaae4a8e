import type { ReactNode } from 'react';
import { act, renderHook } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';
import { qk } from './queryKeys';
import type { Progress, Run } from '@/features/runs/api';
import { useEventStream } from './useEventStream';
import { FakeEventSource } from '@/test/fakeEventSource';

const target = { id: 11, model_id: 1, model_name: 'Fake', label: 'Fake', params: {}, prompt_version_id: null, total: 4, succeeded: 0, failed: 0, skipped: 0, spent_micros: 0, tokens_in: 0, tokens_out: 0 };
const run: Run = {
  id: 7, row_version: 1, headline_scorer_id: null, name: 'demo', status: 'pending', total: 4, succeeded: 0, failed: 0, skipped: 0, dataset_id: 1, dataset_version_id: 1,
  settings: { repeats: 1, concurrency: null, cache: true, stream: false, timeout_s: null, max_retries: 2, max_history_pairs: 10, shards: null, rag: null },
  budget_micros: null, alert_threshold: 0.8, spent_micros: 0, judge_spent_micros: 0, reserved_micros: 0, tokens_in: 0, tokens_out: 0, error: null,
  targets: [target], scorers: [], created_at: '2024-01-01T00:00:00Z', started_at: null, finished_at: null,
};

function setup(options: { enabled?: boolean } = {}) {
  const client = makeQueryClient({ retry: false });
  client.setQueryData(qk.run(3, 7), run);
  client.setQueryData(qk.outputs(3, 7, 1), { items: [], total: 0, page: 1, page_size: 50 });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
  const hook = renderHook(() => useEventStream(3, 7, { EventSourceImpl: FakeEventSource, ...options }), { wrapper });
  return { client, hook, es: FakeEventSource.instances.at(-1)! };
}

const ev = (type: string, status: string, succeeded: number, failed: number): Progress & { type: string } => ({
  type, run_id: 7, status: status as Progress['status'], total: 4, done: succeeded + failed, succeeded, failed, skipped: 0,
  spent_micros: 100 * succeeded, judge_spent_micros: 0, reserved_micros: 0, budget_micros: null, project_budget_micros: null, project_spent_micros: 0,
  tokens_in: 10 * succeeded, tokens_out: 5 * succeeded, elapsed_s: 5, eta_s: 5, started_at: '2024-01-01T00:00:05Z',
  finished_at: status === 'completed' ? '2024-01-01T00:00:09Z' : null, error: null, errors: failed ? { timeout: failed } : {},
  targets: [{ target_id: 11, label: 'Fake', total: 4, succeeded, failed, skipped: 0, spent_micros: 100 * succeeded, tokens_in: 0, tokens_out: 0, errors: {} }],
});

afterEach(() => {
  FakeEventSource.instances = [];
});

describe('useEventStream', () => {
  it('connects to the run events URL with credentials', () => {
    const { es, hook } = setup();
    expect(es.url).toBe('/api/projects/3/runs/7/events');
    expect(es.init).toEqual({ withCredentials: true });
    expect(hook.result.current.state).toBe('connecting');
    act(() => es.open());
    expect(hook.result.current.state).toBe('open');
  });

  it('writes each event into the cached run and invalidates the outputs', () => {
    const { es, client, hook } = setup();
    act(() => es.emit('run.started', ev('run.started', 'running', 0, 0)));
    expect(client.getQueryData<Run>(qk.run(3, 7))).toMatchObject({ status: 'running', succeeded: 0, started_at: '2024-01-01T00:00:05Z' });

    expect(client.getQueryState(qk.outputs(3, 7, 1))?.isInvalidated).toBe(true);
    client.setQueryData(qk.outputs(3, 7, 1), { items: [], total: 0, page: 1, page_size: 50 });

    act(() => es.emit('run.progress', ev('run.progress', 'running', 2, 1)));
    expect(client.getQueryData<Run>(qk.run(3, 7))).toMatchObject({ status: 'running', succeeded: 2, failed: 1, total: 4 });
    expect(client.getQueryState(qk.outputs(3, 7, 1))?.isInvalidated).toBe(true);
    expect(hook.result.current.lastEvent?.progress.succeeded).toBe(2);
    expect(client.getQueryData<Progress>(qk.progress(3, 7))).toMatchObject({ done: 3, errors: { timeout: 1 } });
    expect(client.getQueryData<Run>(qk.run(3, 7))?.targets[0]).toMatchObject({ succeeded: 2, failed: 1, spent_micros: 200 });
    expect(es.closed).toBe(false);
  });

  it('ignores an older progress event that arrives late', () => {
    const { es, client } = setup();
    act(() => es.emit('run.progress', ev('run.progress', 'running', 3, 0)));
    act(() => es.emit('run.progress', ev('run.progress', 'running', 1, 0)));
    expect(client.getQueryData<Run>(qk.run(3, 7))?.succeeded).toBe(3);
  });

  it('applies status events even when fewer cells are done (a retry of failed cells), and passes alerts on', () => {
    const seen: string[] = [];
    const client = makeQueryClient({ retry: false });
    client.setQueryData(qk.run(3, 7), run);
    const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
    renderHook(() => useEventStream(3, 7, { EventSourceImpl: FakeEventSource, onEvent: (e) => seen.push(e.type) }), { wrapper });
    const es = FakeEventSource.instances.at(-1)!;
    act(() => es.emit('run.progress', ev('run.progress', 'partial', 3, 1)));
    act(() => es.emit('run.status', ev('run.status', 'running', 3, 0)));
    expect(client.getQueryData<Run>(qk.run(3, 7))).toMatchObject({ status: 'running', succeeded: 3, failed: 0 });
    act(() => es.emit('run.budget_alert', ev('run.budget_alert', 'running', 3, 0)));
    expect(seen).toEqual(['run.progress', 'run.status', 'run.budget_alert']);
  });

  it('closes the stream on run.finished and stops applying events', () => {
    const { es, client, hook } = setup();
    act(() => es.emit('run.finished', ev('run.finished', 'completed', 4, 0)));
    expect(es.closed).toBe(true);
    expect(hook.result.current.state).toBe('closed');
    expect(client.getQueryData<Run>(qk.run(3, 7))).toMatchObject({ status: 'completed', succeeded: 4, finished_at: '2024-01-01T00:00:09Z' });
    act(() => es.emit('run.progress', ev('run.progress', 'running', 1, 0)));
    expect(client.getQueryData<Run>(qk.run(3, 7))?.status).toBe('completed');
  });

  it('also reads unnamed message events by their type field, and skips junk', () => {
    const { es, client } = setup();
    act(() => es.emit('message', ev('run.progress', 'running', 1, 0)));
    expect(client.getQueryData<Run>(qk.run(3, 7))?.succeeded).toBe(1);
    act(() => {
      const bad = new MessageEvent('run.progress', { data: 'not json' });
      (es as unknown as { listeners: Map<string, Array<(e: MessageEvent) => void>> }).listeners.get('run.progress')?.forEach((l) => l(bad));
    });
    expect(client.getQueryData<Run>(qk.run(3, 7))?.succeeded).toBe(1);
  });

  it('reports reconnecting while the browser retries and error once it gives up', () => {
    const { es, hook } = setup();
    act(() => es.fail(0));
    expect(hook.result.current.state).toBe('reconnecting');
    act(() => es.fail(2));
    expect(hook.result.current.state).toBe('error');
  });

  it('does not connect when disabled and closes on unmount', () => {
    setup({ enabled: false });
    expect(FakeEventSource.instances).toHaveLength(0);
    const { es, hook } = setup();
    hook.unmount();
    expect(es.closed).toBe(true);
  });

  it('refetches the run when an event arrives before the run is cached', () => {
    const client = makeQueryClient({ retry: false });
    const spy = vi.spyOn(client, 'invalidateQueries');
    const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
    renderHook(() => useEventStream(3, 7, { EventSourceImpl: FakeEventSource }), { wrapper });
    act(() => FakeEventSource.instances[0].emit('run.progress', ev('run.progress', 'running', 1, 0)));
    expect(spy).toHaveBeenCalledWith({ queryKey: qk.run(3, 7), exact: true });
  });
});
