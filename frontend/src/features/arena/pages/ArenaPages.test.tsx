import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { attemptOf, challengeOf, summaryOf } from '../testFixtures';
import { ArenaLibraryPage } from './ArenaLibraryPage';
import { ArenaWorkspacePage } from './ArenaWorkspacePage';

afterEach(() => vi.unstubAllGlobals());

// CodeMirror measures text ranges, which jsdom does not lay out.
beforeAll(() => {
  const empty = Object.assign([], { item: () => null }) as unknown as DOMRectList;
  Range.prototype.getClientRects = () => empty;
  Range.prototype.getBoundingClientRect = () => new DOMRect();
});

describe('ArenaLibraryPage', () => {
  it('shows each challenge with its badges and searches on the server', async () => {
    const fetch = mockFetch((req) => {
      const q = new URL(req.url).searchParams.get('q');
      if (q === 'zzz') return json({ items: [] });
      return json({ items: [summaryOf(), summaryOf({ id: 'pii-leak', title: 'PII leakage', category: 'Safety', mode_label: 'From scratch', progress: { dev_ready: true, completed: true } })] });
    });
    renderWithProviders(<ArenaLibraryPage />);
    const cards = await screen.findAllByTestId('challenge-card');
    expect(cards).toHaveLength(2);
    expect(within(cards[0]).getByText('refund-verification')).toBeInTheDocument();
    expect(within(cards[0]).getByText('Debug baseline')).toBeInTheDocument();
    expect(within(cards[0]).queryByText('✓ Completed')).toBeNull();
    expect(within(cards[1]).getByText('✓ Completed')).toBeInTheDocument();
    expect(within(cards[1]).getByText('Dev ready')).toBeInTheDocument();
    expect(within(cards[1]).getByRole('link', { name: 'Start PII leakage' })).toHaveAttribute('href', '/arena/pii-leak');

    await userEvent.type(screen.getByLabelText('Search challenges'), 'zzz');
    expect(await screen.findByText('No challenge matches')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => new URL(r.url).searchParams.get('q') === 'zzz')).toBe(true);
  });
});

const saved: Array<{ url: string; body: unknown }> = [];

function workspaceServer(problems: Array<{ line: number; column: number; message: string; level: string }> = []) {
  saved.length = 0;
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path.endsWith('/validate')) return json({ ok: problems.length === 0, problems });
    if (path.endsWith('/hints/rules')) return json({ tab: 'rules', hint: 'rules:\n  - id: TODO\n', revealed_at: '2026-01-01T00:00:00Z' });
    if (path.includes('/drafts/')) {
      const body = (await req.clone().json()) as { text: string };
      saved.push({ url: req.url, body });
      return json({ tab: 'rules', text: body.text, saved_at: '2026-01-01T00:00:00Z' });
    }
    if (path.endsWith('/attempts') && req.method === 'POST') {
      return json(attemptOf(), 201);
    }
    if (path.endsWith('/attempts')) return json({ items: [], total: 0, page: 1, page_size: 1 });
    if (path === '/api/arena/challenges/refund-verification') return json(challengeOf());
    return json({ code: 'not_found', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

const renderWorkspace = () => renderWithProviders(<ArenaWorkspacePage />, { route: '/arena/refund-verification', path: '/arena/:challengeId' });

describe('ArenaWorkspacePage', () => {
  it('shows the context, contract and transcript with role badges and tool calls', async () => {
    workspaceServer();
    renderWorkspace();
    expect(await screen.findByRole('heading', { name: 'Refund verification' })).toBeInTheDocument();
    expect(screen.getByText('MUST call verify_identity before any refund')).toBeInTheDocument();
    const messages = within(screen.getByRole('list', { name: 'Messages' })).getAllByTestId('role-badge');
    expect(messages.map((b) => b.textContent)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(screen.getByText('order_id: 1182')).toBeInTheDocument();
    await userEvent.selectOptions(screen.getByLabelText(/Ticket/), 'dev-02');
    expect(screen.getByText('On its way.')).toBeInTheDocument();
  });

  it('shows the validator’s problems with line and column and blocks running until fixed', async () => {
    workspaceServer([{ line: 2, column: 5, message: 'unknown condition "agent_sez"', level: 'error' }]);
    renderWorkspace();
    const problems = await screen.findByTestId('editor-problems');
    expect(within(problems).getByText('Line 2, column 5: unknown condition "agent_sez"')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /Run \(Dev set\)/ })).toBeDisabled();
    expect(screen.getByText('Fix the problems in the editor first.')).toBeInTheDocument();
  });

  it('runs the dev set, lists the miss, and a click opens the trace with the evidence highlighted', async () => {
    const fetch = workspaceServer();
    renderWorkspace();
    await screen.findByRole('heading', { name: 'Refund verification' });
    await userEvent.selectOptions(screen.getByLabelText(/Ticket/), 'dev-02');
    const run = screen.getByRole('button', { name: /Run \(Dev set\)/ });
    await waitFor(() => expect(run).toBeEnabled());
    await userEvent.click(run);
    const dev = await screen.findByTestId('summary-dev');
    expect(within(dev).getByTestId('gate')).toHaveTextContent('Blocked');
    expect(within(dev).getByText('Pass rate 50%')).toBeInTheDocument();
    expect(within(dev).getByText(/1 critical failure let through/)).toBeInTheDocument();
    const post = requestsOf(fetch).find((r) => r.method === 'POST' && r.url.endsWith('/attempts'))!;
    expect(await post.json()).toEqual({ tab: 'rules', set: 'dev', text: 'rules:\n  - id: todo\n' });

    const missed = screen.getByRole('region', { name: 'Missed failures' });
    await userEvent.click(within(missed).getByRole('button', { name: /dev-01/ }));
    expect(screen.getByLabelText(/Ticket/)).toHaveValue('dev-01');
    await waitFor(() => expect(document.getElementById('arena-dev-01-message-3')).toHaveAttribute('data-evidence', 'bad'));
    expect(screen.getByTestId('trace-verdict')).toHaveTextContent('your eval: pass, disagrees with the label');
  });

  it('inserts the hint’s skeleton and saves the text to the server', async () => {
    workspaceServer();
    renderWorkspace();
    await screen.findByRole('heading', { name: 'Refund verification' });
    await userEvent.click(screen.getByText('Reveal hint'));
    expect(await screen.findByTestId('hint-text')).toHaveTextContent('id: TODO');
    await userEvent.click(screen.getByRole('button', { name: 'Insert skeleton' }));
    await waitFor(
      () => {
        expect(saved).toHaveLength(1);
        expect(saved[0].url).toMatch(/\/api\/arena\/challenges\/refund-verification\/drafts\/rules$/);
        expect(saved[0].body).toEqual({ text: 'rules:\n  - id: TODO\n' });
      },
      { timeout: 3000 },
    );
    expect(screen.getByRole('button', { name: 'Undo insert' })).toBeInTheDocument();
  });
});
