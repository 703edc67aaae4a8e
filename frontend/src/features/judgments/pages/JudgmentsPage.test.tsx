import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, dataset, project } from '@/features/datasets/testFixtures';
import type { Judgments } from '../api';
import { agreementReading } from '../api';
import { judge, judgments, question, rating } from '../testFixtures';

const results = '/api/projects/3/runs/77/judgments';

function serve(answers: Array<() => Response>) {
  let call = 0;
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project('viewer'));
    if (path === '/api/projects/3/datasets/11') return json(dataset());
    if (path === results) return answers[Math.min(call++, answers.length - 1)]();
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const open = () => renderProject('/projects/3/datasets/11/judgments/77');

describe('JudgmentsPage', () => {
  it('shows each question with every judge’s ratings side by side, and the justification on focus', async () => {
    serve([() => json(judgments())]);
    open();
    const table = await screen.findByRole('table', { name: 'Judgments' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['#', 'Question', 'Fake Fast', 'Fake Smart']);
    const [, first, second] = within(table).getAllByRole('row');
    const [, q1, fast1, smart1] = within(first).getAllByRole('cell');
    expect(q1).toHaveTextContent('Question 1?');
    expect(within(fast1).getByTestId('rating-clarity')).toHaveTextContent('8');
    expect(within(smart1).getByTestId('rating-clarity')).toHaveTextContent('7');
    expect(fast1).toHaveTextContent('Overall 6.5');
    const [, , fast2, smart2] = within(second).getAllByRole('cell');
    expect(within(fast2).getByTestId('rating-clarity')).toHaveTextContent('9.5');
    expect(within(smart2).getByText('Failed')).toBeInTheDocument();

    const why = within(fast1).getByRole('button', { name: 'Justification of Fake Fast, question 1' });
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();
    why.focus();
    const tip = await screen.findByRole('tooltip');
    expect(tip).toHaveTextContent('Clarity: Unambiguous wording.');
    expect(tip).toHaveTextContent('Clear and reasonably hard.');
    expect(why).toHaveAccessibleDescription(/Clear and reasonably hard/);
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('tooltip')).not.toBeInTheDocument();

    await userEvent.hover(within(smart2).getByRole('button', { name: 'Error of Fake Smart, question 2' }));
    expect(await screen.findByRole('tooltip')).toHaveTextContent('Judge reply rejected: not JSON');
  });

  it('reads the agreement per criterion in plain language, with each judge’s means', async () => {
    serve([() => json(judgments())]);
    open();
    const agreement = await screen.findByRole('table', { name: 'Agreement between judges' });
    const rows = within(agreement).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual(['Clarity', 'Difficulty', 'Overall (mean of the criteria)']);
    expect(within(agreement).getByTestId('alpha-clarity')).toHaveTextContent('0.85');
    expect(rows[0]).toHaveTextContent('Strong agreement');
    expect(rows[1]).toHaveTextContent('Weak agreement');
    expect(rows[2]).toHaveTextContent('disagree more than chance');
    const means = screen.getByRole('table', { name: 'Mean rating per judge' });
    const fast = within(means).getAllByRole('row')[1];
    expect(fast).toHaveTextContent('Fake Fast');
    expect(fast).toHaveTextContent('8.0 (7.0–9.0)');
    expect(fast).toHaveTextContent('$0.0012');
    expect(screen.getByTestId('judging-progress')).toHaveTextContent('All 4 ratings are in.');
    expect(screen.getByRole('link', { name: 'Capitals' })).toHaveAttribute('href', '/projects/3/datasets/11');
  });

  it('shows progress while the judges rate, polling until every rating is in', async () => {
    const pending: Judgments = judgments({
      progress: { questions: 2, expected: 4, scored: 1, failed: 0, done: false },
      items: [question(1, [rating('5'), rating('6', { status: 'pending', scores: {}, overall: null, justification: '', rationales: {} })]), question(2, [rating('5', { status: 'pending', scores: {}, overall: null, justification: '', rationales: {} }), rating('6', { status: 'pending', scores: {}, overall: null, justification: '', rationales: {} })])],
    });
    const fetch = serve([() => json(pending), () => json(judgments())]);
    open();
    expect(await screen.findByTestId('judging-progress')).toHaveTextContent('Judging: 1 of 4 ratings…');
    expect(screen.getByRole('progressbar', { name: 'Judging progress' })).toHaveAttribute('aria-valuenow', '25');
    expect(screen.getAllByText('Rating…')).toHaveLength(3);
    await waitFor(() => expect(screen.getByTestId('judging-progress')).toHaveTextContent('All 4 ratings are in.'), { timeout: 4000 });
    expect(screen.queryByRole('progressbar')).not.toBeInTheDocument();
    expect(requestsOf(fetch).filter((r) => new URL(r.url).pathname === results)).toHaveLength(2);
  });

  it('pages through the questions', async () => {
    const fetch = serve([() => json(judgments({ total: 45 }))]);
    open();
    const pager = await screen.findByRole('navigation', { name: 'Judgments pagination' });
    expect(pager).toHaveTextContent('Questions 1–20 of 45');
    await userEvent.click(within(pager).getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(requestsOf(fetch).some((r) => new URL(r.url).searchParams.get('page') === '2')).toBe(true));
  });

  it('says when there is nothing to show, or something went wrong', async () => {
    serve([() => json(apiError(404, 'NOT_FOUND', 'This run has no question judgments'), 404)]);
    const { unmount } = open();
    expect(await screen.findByText('No judgments here')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Back to the dataset' })).toHaveAttribute('href', '/projects/3/datasets/11');
    unmount();
    serve([() => json(apiError(500, 'INTERNAL_SERVER_ERROR', 'Boom'), 500), () => json(judgments({ judges: [judge('5', 'Solo')] }))]);
    open();
    expect(await screen.findByText('Could not load the judgments')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('table', { name: 'Judgments' })).toBeInTheDocument();
  });
});

describe('agreementReading', () => {
  it.each([
    [0.92, 2, 'strong'],
    [0.8, 3, 'strong'],
    [0.7, 2, 'moderate'],
    [0.5, 2, 'weak'],
    [0, 2, 'weak'],
    [-0.1, 2, 'against'],
    [null, 2, 'none'],
    [0.9, 1, 'none'],
  ] as const)('alpha %s with %s judges reads as %s', (alpha, judges, level) => {
    expect(agreementReading(alpha, judges).level).toBe(level);
  });
});
