import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders } from '@/test/utils';
import { caseOutput, caseView, score } from '../testFixtures';
import { CaseViewPage } from './CaseViewPage';

const PATH = '/projects/:projectId/runs/:runId/cases/:caseId';

function serve() {
  return mockFetch(async (req) => {
    const m = /^\/api\/projects\/3\/runs\/7\/cases\/(\d+)$/.exec(new URL(req.url).pathname);
    if (!m) return json({ status: 404, code: 'NOT_FOUND', message: 'Nope' }, 404);
    const id = Number(m[1]);
    if (id === 99) return json({ status: 404, code: 'NOT_FOUND', message: 'Case 99 is not in run 7: the run covers the cases of its dataset version only' }, 404);
    const base = caseView();
    return json({
      ...base,
      position: id - 9,
      previous_case_id: id > 10 ? id - 1 : null,
      next_case_id: id < 12 ? id + 1 : null,
      case: { ...base.case, id, input: { question: `Question ${id}?` } },
    });
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('CaseViewPage', () => {
  it('shows the case, every target side by side with scores and errors, and a diff', async () => {
    serve();
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    expect(await screen.findByRole('heading', { name: 'Case 2 of 3' })).toBeInTheDocument();
    expect(screen.getByText('Question 11?')).toBeInTheDocument();
    expect(screen.getByText('Paris')).toBeInTheDocument();
    const columns = within(screen.getByTestId('side-by-side'));
    const fast = columns.getByRole('region', { name: 'Fast' });
    expect(fast).toHaveTextContent('The capital is Paris.');
    expect(fast).toHaveTextContent('10 in / 5 out tokens');
    expect(fast).toHaveTextContent('120 ms');
    expect(fast).toHaveTextContent('Helpfulness');
    expect(within(fast).getByText('Short and right.')).toBeInTheDocument(); // the rationale, in a disclosure
    expect(columns.getByRole('region', { name: 'Broken' })).toHaveTextContent('timeout: No reply in 30 s');
    expect(screen.getByRole('heading', { name: 'Compare two outputs' })).toBeInTheDocument();
    expect(screen.getByTestId('diff-text').querySelector('ins')).toHaveTextContent('added: +city');
    expect(screen.getByRole('link', { name: /Back to run Nightly/ })).toHaveAttribute('href', '/projects/3/runs/7');
  });

  it('moves between cases with the buttons and with j/k', async () => {
    const user = userEvent.setup();
    serve();
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    await screen.findByRole('heading', { name: 'Case 2 of 3' });
    await user.keyboard('j');
    expect(await screen.findByRole('heading', { name: 'Case 3 of 3' })).toBeInTheDocument();
    expect(screen.getByText('Next case →')).toHaveAttribute('aria-disabled', 'true');
    await user.keyboard('[[');
    expect(await screen.findByRole('heading', { name: 'Case 2 of 3' })).toBeInTheDocument();
    await user.click(screen.getByRole('link', { name: '← Previous case' }));
    expect(await screen.findByRole('heading', { name: 'Case 1 of 3' })).toBeInTheDocument();
    // typing in a control does not navigate
    screen.getByLabelText('From').focus();
    await user.keyboard('j');
    expect(screen.getByRole('heading', { name: 'Case 1 of 3' })).toBeInTheDocument();
  });

  it('says clearly when the case is not in the run', async () => {
    serve();
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/99', path: PATH });
    expect(await screen.findByText('Case not found in this run')).toBeInTheDocument();
    expect(screen.getByText(/Case 99 is not in run 7/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Back to the run' })).toHaveAttribute('href', '/projects/3/runs/7');
  });

  it('shows every repeat of a target, each one selectable in the diff', async () => {
    mockFetch(async () =>
      json(
        caseView({
          targets: [
            {
              target_id: 1,
              label: 'Fast · temperature 1',
              model_id: 1,
              outputs: [caseOutput({ text: 'First try.' }), caseOutput({ repeat: 1, text: 'Second try.' })],
            },
          ],
        }),
      ),
    );
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    const column = await screen.findByRole('region', { name: 'Fast · temperature 1' });
    expect(within(column).getByRole('article', { name: 'Fast · temperature 1 · repeat 2' })).toHaveTextContent('Second try.');
    expect(within(screen.getByLabelText('From')).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'Fast · temperature 1 · repeat 1',
      'Fast · temperature 1 · repeat 2',
    ]);
    expect(screen.getByTestId('diff-text').querySelector('del')).toHaveTextContent('removed: −First');
  });

  it('hides and shows targets in the side-by-side columns', async () => {
    const user = userEvent.setup();
    serve();
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    const columns = within(await screen.findByTestId('side-by-side'));
    expect(columns.getAllByRole('region').map((r) => r.getAttribute('aria-label'))).toEqual(['Fast', 'Slow', 'Broken']);
    const shown = screen.getByRole('group', { name: 'Targets shown' });
    await user.click(within(shown).getByLabelText('Broken'));
    expect(columns.getAllByRole('region').map((r) => r.getAttribute('aria-label'))).toEqual(['Fast', 'Slow']);
    await user.click(within(shown).getByLabelText('Fast'));
    await user.click(within(shown).getByLabelText('Slow'));
    expect(screen.getByText('Every target is hidden')).toBeInTheDocument();
    await user.click(within(shown).getByLabelText('Slow'));
    expect(within(screen.getByTestId('side-by-side')).getAllByRole('region').map((r) => r.getAttribute('aria-label'))).toEqual(['Slow']);
  });

  it('shows the conversation a scorer checked, as sent, with its evidence', async () => {
    const flagged = score({
      scorer_name: 'Policy',
      kind: 'rules',
      passed: false,
      severity: 'low',
      evidence: [{ message_index: 2, start: 2, end: 9, text: 'promise', label: 'no_promises' }],
      details: { rules: [{ id: 'no_promises', severity: 'low', message: 'assistant message 2 matches "promise"' }] },
    });
    const conversation = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'I promise: Paris.' },
    ];
    mockFetch(async () =>
      json(caseView({ targets: [{ target_id: 1, label: 'Fast', model_id: 1, outputs: [caseOutput({ text: 'I promise: Paris.', scores: [flagged], conversation })] }] })),
    );
    renderWithProviders(<CaseViewPage />, { route: '/projects/3/runs/7/cases/11', path: PATH });
    expect(await screen.findByRole('heading', { name: 'Conversation with Fast' })).toBeInTheDocument();
    const messages = screen.getByRole('list', { name: 'Messages' });
    expect(within(messages).getAllByTestId('role-badge').map((b) => b.textContent)).toEqual(['system', 'user', 'assistant']);
    const item = within(messages).getByRole('listitem', { name: 'Message 2, assistant, warning' });
    expect(item).toHaveTextContent('Warning (low): no_promises — Policy: assistant message 2 matches "promise"');
    expect(item.querySelector('mark')).toHaveTextContent('promise');
  });
});
