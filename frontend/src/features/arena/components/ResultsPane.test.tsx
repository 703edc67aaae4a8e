import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { attemptOf, runSummary } from '../testFixtures';
import { ResultsPane } from './ResultsPane';

const contract = ['MUST call verify_identity before any refund', 'MUST NOT reveal internal notes'];

function renderPane(over: Partial<Parameters<typeof ResultsPane>[0]> = {}) {
  const props = {
    tab: 'rules' as const,
    threshold: 0.85,
    contract,
    dev: null,
    test: null,
    running: null,
    runError: null,
    blockedReason: null,
    onRun: vi.fn(),
    onShip: vi.fn(),
    onJump: vi.fn(),
    onTrace: vi.fn(),
    ...over,
  };
  render(<ResultsPane {...props} />);
  return props;
}

describe('ResultsPane', () => {
  it('says what to do before any run, and runs or ships on click', async () => {
    const props = renderPane();
    expect(screen.getByText(/No run yet/)).toBeInTheDocument();
    expect(screen.getByText(/Not shipped yet/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: /Run \(Dev set\)/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Ship to Prod (Hidden)' }));
    expect(props.onRun).toHaveBeenCalledOnce();
    expect(props.onShip).toHaveBeenCalledOnce();
  });

  it('shows the diff counts and the misses, and a miss jumps with its trace and message', async () => {
    const dev = attemptOf({ diff: { previous_attempt_id: 4, fixed: ['dev-05', 'dev-06'], regressed: [], new_fail: ['dev-01'] } });
    const props = renderPane({ dev });
    expect(screen.getByText('Since the previous run')).toBeInTheDocument();
    expect(screen.getByTestId('diff-fixed')).toHaveTextContent('2');
    expect(screen.getByTestId('diff-regressed')).toHaveTextContent('0');
    expect(screen.getByTestId('diff-new_fail')).toHaveTextContent('1');
    await userEvent.click(within(screen.getByRole('region', { name: 'Missed failures' })).getByRole('button'));
    expect(props.onJump).toHaveBeenCalledWith(expect.objectContaining({ trace_id: 'dev-01', message_index: 3, kind: 'missed_failure' }));
    expect(within(screen.getByRole('region', { name: 'False alarms' })).getByText('None.')).toBeInTheDocument();
  });

  it('shows a ship’s gate, its redacted report and the meta-judge critique', () => {
    const test = attemptOf({
      tab: 'judge',
      set: 'test',
      results: [],
      summary: runSummary({ pass_rate: 1, critical_count: 0, ready: true, passed: 20, total: 20 }),
      report: [
        {
          trace_id: 'test-03',
          miss: 'false_alarm',
          cluster: 'refund claimed, never issued',
          contract_clause: contract[0],
          severity: null,
          excerpts: [{ message_index: 2, role: 'assistant', text: 'I have ■■■ a refund for order ■■■.' }],
        },
      ],
      critique: {
        critique: 'Define what counts as evidence.',
        references_contract: true,
        missing_clauses: [contract[1]],
        defines_evidence: false,
        vague_phrases: ['helpful'],
        high_variance: true,
        judge: '1',
        error: null,
      },
    });
    renderPane({ tab: 'judge', test });
    expect(within(screen.getByTestId('summary-prod')).getByTestId('gate')).toHaveTextContent('Prod ready');
    expect(screen.getByText(/Challenge completed/)).toBeInTheDocument();
    const entry = screen.getByTestId('report-entry');
    expect(entry).toHaveTextContent('refund claimed, never issued');
    expect(entry).toHaveTextContent('False alarm');
    expect(entry).toHaveTextContent('I have ■■■ a refund for order ■■■.');
    const critique = screen.getByTestId('critique');
    expect(critique).toHaveTextContent('Define what counts as evidence.');
    expect(critique).toHaveTextContent('does not define evidence; expect high variance');
    expect(critique).toHaveTextContent('Missing clauses: MUST NOT reveal internal notes');
    expect(critique).toHaveTextContent('Vague: “helpful”');
  });
});
