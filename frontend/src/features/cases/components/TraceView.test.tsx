import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { findingsOf, type TraceMessage } from '../evidence';
import { score } from '../testFixtures';
import { TraceView } from './TraceView';

const messages: TraceMessage[] = [
  { role: 'system', content: 'You are a support agent.' },
  { role: 'user', content: 'Refund my order' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": "order"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'order 7: shipped' },
  { role: 'assistant', content: 'I promise it is refunded.' },
];

// what the rules scorer writes: evidence by message index, each rule's severity and message
const rules = score({
  scorer_name: 'Policy',
  kind: 'rules',
  value: 0,
  passed: false,
  severity: 'high',
  rationale: '2 of 2 rules failed',
  evidence: [
    { message_index: 4, start: 16, end: 24, text: 'refunded', label: 'must_look_up' },
    { message_index: 4, start: 2, end: 9, text: 'promise', label: 'no_promises' },
  ],
  details: {
    rules: [
      { id: 'must_look_up', severity: 'high', message: 'assistant message 4 matches "refunded", but lookup was never called' },
      { id: 'no_promises', severity: 'low', message: 'assistant message 4 matches "promise"' },
    ],
  },
});

describe('TraceView', () => {
  it('labels each message with its role and shows tool calls with their name, arguments and result', () => {
    render(<TraceView messages={messages} findings={[]} />);
    const items = within(screen.getByRole('list', { name: 'Messages' })).getAllByRole('listitem', { name: /^Message \d/ });
    expect(items.map((li) => within(li).getByTestId('role-badge').textContent)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    const call = within(items[2]!).getByRole('list', { name: 'Tool calls' });
    expect(call).toHaveTextContent('Calls search (call c1)');
    expect(call).toHaveTextContent('{"q": "order"}');
    expect(items[3]).toHaveTextContent('search');
    expect(items[3]).toHaveTextContent('result of call c1');
    expect(items[3]).toHaveTextContent('order 7: shipped');
    expect(screen.getByText('No scorer pointed at a message of this conversation.')).toBeInTheDocument();
    expect(document.querySelectorAll('[data-evidence]')).toHaveLength(0);
  });

  it('highlights the messages a scorer pointed at by severity, with its message, and jumps to them', async () => {
    const user = userEvent.setup();
    const findings = findingsOf([rules]);
    render(<TraceView messages={messages} findings={findings} />);
    const flagged = screen.getByRole('listitem', { name: 'Message 4, assistant, violation' });
    expect(flagged).toHaveAttribute('data-evidence', 'bad');
    expect(flagged.className).toContain('border-l-red-600');
    expect(flagged.className).toContain('bg-red-50');
    expect(flagged).toHaveTextContent('Violation (high): must_look_up — Policy: assistant message 4 matches "refunded", but lookup was never called');
    expect(flagged).toHaveTextContent('Warning (low): no_promises — Policy: assistant message 4 matches "promise"');
    expect([...flagged.querySelectorAll('mark')].map((m) => m.textContent)).toEqual(['promise', 'refunded']);
    expect(screen.getByRole('listitem', { name: 'Message 1, user' })).not.toHaveAttribute('data-evidence');

    const nav = screen.getByRole('navigation', { name: 'Evidence' });
    const jump = within(nav).getByRole('button', { name: /Jump to message 4: violation, must_look_up/ });
    await user.tab();
    expect(jump).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(flagged).toHaveFocus();
  });

  it('a low-severity finding alone is a warning (amber)', () => {
    const low = score({ kind: 'rules', passed: false, severity: 'low', evidence: [{ message_index: 1, start: null, end: null, text: 'Refund', label: 'r' }], details: { rules: [{ id: 'r', severity: 'low', message: 'user asked' }] } });
    render(<TraceView messages={messages} findings={findingsOf([low])} />);
    const item = screen.getByRole('listitem', { name: 'Message 1, user, warning' });
    expect(item).toHaveAttribute('data-evidence', 'warn');
    expect(item.className).toContain('bg-amber-50');
    expect(item).toHaveTextContent('Warning (low): r');
  });

  it('what a passing check points at is support (green, "Passed"), never a warning', () => {
    const match = score({ scorer_name: 'Mentions refund', kind: 'contains', value: 1, passed: true, severity: null, evidence: [{ message_index: 4, start: 16, end: 24, text: 'refunded', label: 'refund' }] });
    render(<TraceView messages={messages} findings={findingsOf([match])} />);
    const item = screen.getByRole('listitem', { name: 'Message 4, assistant, passed' });
    expect(item).toHaveAttribute('data-evidence', 'ok');
    expect(item.className).toContain('bg-emerald-50');
    expect(item).not.toHaveTextContent('Warning');
  });
});
