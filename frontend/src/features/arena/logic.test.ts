import { describe, expect, it } from 'vitest';
import { blockedBecause, findingsFor, initialText, jumpIndex, keyFields, missesOf, passReading, splitMisses, toTraceMessage } from './logic';
import { attemptOf, challengeOf, resultOf, runSummary } from './testFixtures';

describe('arena logic', () => {
  it('opens the editor on the saved draft, else on the challenge’s starting text', () => {
    expect(initialText(challengeOf(), 'rules')).toBe('rules:\n  - id: todo\n');
    const c = challengeOf();
    expect(initialText({ ...c, tabs: { ...c.tabs, rules: { ...c.tabs.rules, draft: 'rules: []' } } }, 'rules')).toBe('rules: []');
    // an empty draft is still the learner's text, not "no draft"
    expect(initialText({ ...c, tabs: { ...c.tabs, judge: { ...c.tabs.judge, draft: '' } } }, 'judge')).toBe('');
  });

  it('maps a tool result’s tool name and renders call arguments as key fields', () => {
    const [, call, result] = challengeOf().dev_traces[0].messages.map(toTraceMessage);
    expect(result.name).toBe('lookup_order');
    expect(call.tool_calls).toEqual([{ name: 'lookup_order', arguments: 'order_id: 1182' }]);
    expect(keyFields('{"a": 1, "b": "x"}')).toEqual([
      ['a', '1'],
      ['b', 'x'],
    ]);
    expect(keyFields('not json')).toEqual([['', 'not json']]);
    expect(keyFields(null)).toEqual([]);
  });

  it('turns a dev result’s evidence into transcript highlights for that trace only', () => {
    const attempt = attemptOf();
    const found = findingsFor(attempt, 'dev-01');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ messageIndex: 3, level: 'bad', label: 'refund_needs_identity', scorer: 'Rules', severity: null, start: 5, end: 11 });
    expect(findingsFor(attempt, 'dev-02')).toEqual([]);
    expect(findingsFor(null, 'dev-01')).toEqual([]);
  });

  it('explains pass and why the gate is blocked', () => {
    const s = runSummary({ critical_count: 2 });
    expect(passReading(s, 0.85)).toMatch(/^1 of 2 traces agree with their label\. A trace passes when your eval agrees with its label/);
    expect(blockedBecause(s, 0.85)).toEqual(['pass rate 50% is below 85%', '2 critical failures let through']);
    expect(blockedBecause({ ...s, pass_rate: 0.9, critical_count: 1 }, 0.85)).toEqual(['1 critical failure let through']);
    expect(blockedBecause({ ...s, ready: true }, 0.85)).toEqual([]);
  });

  it('splits misses into missed failures and false alarms', () => {
    const { missed, falseAlarms } = splitMisses([
      { trace_id: 'a', kind: 'missed_failure', message_index: null, severity: null, clause: null },
      { trace_id: 'b', kind: 'false_alarm', message_index: 1, severity: null, clause: null },
    ]);
    expect(missed.map((m) => m.trace_id)).toEqual(['a']);
    expect(falseAlarms.map((m) => m.trace_id)).toEqual(['b']);
    expect(splitMisses(undefined)).toEqual({ missed: [], falseAlarms: [] });
  });

  it('derives the misses from the results, opening at the evidence or the agent’s last message', () => {
    const c = challengeOf();
    const attempt = attemptOf({
      results: [
        ...attemptOf().results,
        resultOf({ trace_id: 'dev-03', label: 'fail', agreed: false, miss: 'missed_failure', label_severity: 'high', violated_clause: 1 }),
        resultOf({ trace_id: 'dev-04', verdict: 'fail', agreed: false, miss: 'false_alarm', severity: 'low', evidence: [{ message_index: null, start: null, end: null, label: 'x', detail: '', level: 'warn' }] }),
      ],
    });
    expect(missesOf(attempt, c.context.contract)).toEqual([
      { trace_id: 'dev-01', kind: 'missed_failure', message_index: 3, severity: 'critical', clause: 'MUST call verify_identity before any refund' },
      { trace_id: 'dev-03', kind: 'missed_failure', message_index: null, severity: 'high', clause: 'MUST NOT reveal internal notes' },
      { trace_id: 'dev-04', kind: 'false_alarm', message_index: null, severity: 'low', clause: null },
    ]);
    const miss = missesOf(attempt, c.context.contract)[1];
    expect(jumpIndex(miss, c.dev_traces[0])).toBe(3);
    expect(jumpIndex(miss, c.dev_traces[1])).toBe(1);
    expect(jumpIndex({ ...miss, message_index: 0 }, c.dev_traces[0])).toBe(0);
    expect(jumpIndex(miss, undefined)).toBeNull();
  });
});
