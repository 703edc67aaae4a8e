import { act, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeEventSource } from '@/test/fakeEventSource';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { RunPage } from './RunPage';

const baseRun = {
  id: 7, name: 'Demo run', status: 'pending', total: 4, succeeded: 0, failed: 0,
  created_at: '2024-01-01T00:00:00Z', started_at: null, finished_at: null, dataset_version_id: 1, model_ids: [1, 2],
};
const project = {
  id: 3, name: 'Alpha', slug: 'alpha', description: null, role: 'editor', member_count: 1,
  created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z',
};
const output = (id: number) => ({
  id, case_id: id, model_id: 1, model_name: 'Fake Fast', repeat: 0, status: 'succeeded', text: `answer ${id}`,
  error_class: null, error: null, latency_ms: 100, tokens_in: 10, tokens_out: 8, cost_micros: 0,
});
const ev = (type: string, status: string, succeeded: number, failed: number) => ({
  type, run_id: 7, status, total: 4, succeeded, failed, at: '2024-01-01T00:00:05Z',
});

function serve(outputs: () => unknown[], run: () => unknown = () => baseRun) {
  return mockFetch((req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project);
    if (path === '/api/projects/3/runs/7') return json(run());
    if (path === '/api/projects/3/runs/7/outputs') {
      const items = outputs();
      return json({ items, total: items.length, page: 1, page_size: 50 });
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderRun = () => renderWithProviders(<RunPage />, { route: '/projects/3/runs/7', path: '/projects/:projectId/runs/:runId' });

beforeEach(() => {
  vi.stubGlobal('EventSource', FakeEventSource);
});
afterEach(() => {
  FakeEventSource.instances = [];
});

describe('RunPage', () => {
  it('moves the progress bar and counters live from the event stream', async () => {
    let outputs: unknown[] = [];
    const fetch = serve(() => outputs);
    renderRun();

    const bar = await screen.findByRole('progressbar', { name: 'Run progress' });
    expect(bar).toHaveAttribute('aria-valuenow', '0');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Pending');
    expect(await screen.findByText('No outputs yet')).toBeInTheDocument();

    const es = FakeEventSource.instances[0];
    expect(es.url).toBe('/api/projects/3/runs/7/events');
    act(() => es.open());
    expect(screen.getByTestId('stream-state')).toHaveTextContent('Live');

    outputs = [output(1), output(2)];
    act(() => es.emit('run.started', ev('run.started', 'running', 0, 0)));
    act(() => es.emit('run.progress', ev('run.progress', 'running', 1, 1)));
    expect(bar).toHaveAttribute('aria-valuenow', '50');
    expect(screen.getByTestId('run-percent')).toHaveTextContent('50%');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Running');
    expect(screen.getByTestId('run-succeeded')).toHaveTextContent('1');
    expect(screen.getByTestId('run-failed')).toHaveTextContent('1');
    // the outputs list was invalidated and refetched
    expect(await screen.findByText('answer 2')).toBeInTheDocument();

    act(() => es.emit('run.finished', ev('run.finished', 'completed', 4, 0)));
    expect(bar).toHaveAttribute('aria-valuenow', '100');
    expect(screen.getByTestId('run-percent')).toHaveTextContent('100%');
    expect(screen.getByTestId('run-status')).toHaveTextContent('Completed');
    expect(screen.getByText(/Run completed: 4 succeeded, 0 failed of 4/)).toBeInTheDocument();
    expect(es.closed).toBe(true);
    await waitFor(() =>
      expect(requestsOf(fetch).filter((r) => new URL(r.url).pathname.endsWith('/outputs')).length).toBeGreaterThanOrEqual(2),
    );
  });

  it('does not open a stream for a run that is already over', async () => {
    serve(() => [output(1)], () => ({ ...baseRun, status: 'completed', succeeded: 4, started_at: '2024-01-01T00:00:01Z', finished_at: '2024-01-01T00:00:03Z' }));
    renderRun();
    expect(await screen.findByText('100%')).toBeInTheDocument();
    expect(screen.getByTestId('run-status')).toHaveTextContent('Completed');
    expect(screen.getByText(/in 2 s/)).toBeInTheDocument();
    expect(FakeEventSource.instances).toHaveLength(0);
  });

  it('falls back to polling when the browser gives up on the stream', async () => {
    let calls = 0;
    const fetch = serve(() => [], () => {
      calls += 1;
      return calls === 1 ? baseRun : { ...baseRun, status: 'completed', succeeded: 4 };
    });
    renderRun();
    await screen.findByRole('progressbar');
    act(() => FakeEventSource.instances[0].fail(2));
    expect(await screen.findByTestId('stream-state')).toHaveTextContent('Live updates unavailable');
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('Completed'), { timeout: 5000 });
    expect(requestsOf(fetch).filter((r) => new URL(r.url).pathname === '/api/projects/3/runs/7').length).toBe(2);
  });

  it('shows the server message with a retry button when the run cannot load', async () => {
    mockFetch(() => json({ code: 'INTERNAL_ERROR', status: 500, message: 'Redis is down', errors: {} }, 500));
    renderRun();
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load the run');
    expect(alert).toHaveTextContent('Redis is down');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });
});
