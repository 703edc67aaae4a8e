import type { Attempt, Challenge, ChallengeSummary, Summary, TraceResult } from './types';

export const summaryOf = (over: Partial<ChallengeSummary> = {}): ChallengeSummary => ({
  id: 'refund-verification',
  title: 'Refund verification',
  description: 'Catch refunds issued without identity checks.',
  category: 'Performance',
  difficulty: 'Medium',
  start_mode: 'baseline',
  mode_label: 'Debug baseline',
  pass_threshold: 0.85,
  dev_count: 2,
  test_count: 20,
  progress: { dev_ready: false, completed: false },
  ...over,
});

const tabState = (starting: string, over: Partial<Challenge['tabs']['rules']> = {}): Challenge['tabs']['rules'] => ({
  baseline_text: starting,
  draft_row_version: 0,
  default_text: '',
  starting_text: starting,
  draft: null,
  draft_saved_at: null,
  has_hint: true,
  hint: null,
  dev_ready: false,
  prod_ready: false,
  ...over,
});

export const challengeOf = (over: Partial<Challenge> = {}): Challenge => ({
  ...summaryOf(),
  ship_judges: [{ id: 'fake:fake-judge', kind: 'fake', model: 'fake-judge' }],
  context: {
    system_prompt: 'You are a support agent.',
    tools: [{ name: 'verify_identity', description: 'Verify the customer', input_schema: { type: 'object' } }],
    contract: ['MUST call verify_identity before any refund', 'MUST NOT reveal internal notes'],
  },
  dev_traces: [
    {
      id: 'dev-01',
      messages: [
        { role: 'user', content: 'I want a refund for order 1182' },
        { role: 'assistant', content: 'Let me check.', tool_calls: [{ name: 'lookup_order', arguments: { order_id: '1182' } }] },
        { role: 'tool', content: '{"status": "delivered"}', metadata: { tool_name: 'lookup_order' } },
        { role: 'assistant', content: 'Your refund is done.' },
      ],
    },
    { id: 'dev-02', messages: [{ role: 'user', content: 'Where is my parcel?' }, { role: 'assistant', content: 'On its way.' }] },
  ],
  tabs: { rules: tabState('rules:\n  - id: todo\n'), judge: tabState('Fail when …') },
  ...over,
});

export const resultOf = (over: Partial<TraceResult> = {}): TraceResult => ({
  trace_id: 'dev-02',
  label: 'pass',
  verdict: 'pass',
  agreed: true,
  miss: null,
  severity: null,
  cluster: '',
  evidence: [],
  reasoning: '',
  error: null,
  label_severity: null,
  violated_clause: null,
  ...over,
});

export const runSummary = (over: Partial<Summary> = {}): Summary => ({
  pass_rate: 0.5,
  critical_count: 1,
  ready: false,
  passed: 1,
  total: 2,
  threshold: 0.85,
  missed_failures: 1,
  false_alarms: 0,
  ...over,
});

export const attemptOf = (over: Partial<Attempt> = {}): Attempt => ({
  id: 1,
  challenge_id: 'refund-verification',
  tab: 'rules',
  set: 'dev',
  text: 'rules: []',
  created_at: '2026-01-01T00:00:00Z',
  summary: runSummary(),
  results: [
    resultOf({
      trace_id: 'dev-01',
      label: 'fail',
      verdict: 'pass',
      agreed: false,
      miss: 'missed_failure',
      label_severity: 'critical',
      violated_clause: 0,
      evidence: [{ message_index: 3, label: 'refund_needs_identity', detail: 'refund without verify_identity', level: 'bad', start: 5, end: 11 }],
    }),
    resultOf(),
  ],
  report: [],
  diff: { previous_attempt_id: null, fixed: [], regressed: [], new_fail: ['dev-01'] },
  critique: null,
  project_id: null,
  judge: null,
  cost_micros: 0,
  duration_ms: 3,
  ...over,
});
