import type { CaseOutput, CaseView, Score } from './api';

let ids = 100;

export function score(over: Partial<Score> = {}): Score {
  return {
    id: ids++,
    scorer_id: 1,
    scorer_name: 'Helpfulness',
    scorer_version_id: 1,
    version: 1,
    kind: 'llm_judge',
    source: 'fake-judge',
    value: 0.75,
    passed: true,
    criteria: {},
    rationale: 'Clear and correct.',
    evidence: [],
    severity: null,
    flags: [],
    details: {},
    error: null,
    author_id: null,
    author_name: null,
    comment: null,
    created_at: '2026-11-22T05:00:00Z',
    updated_at: '2026-11-22T05:00:00Z',
    row_version: 1,
    ...over,
  };
}

export function caseOutput(over: Partial<CaseOutput> = {}): CaseOutput {
  return {
    id: ids++,
    case_id: 11,
    case_number: 1,
    retrieved: null,
    target_id: 1,
    model_id: 1,
    label: 'Fast',
    repeat: 0,
    turn: 0,
    status: 'succeeded',
    text: 'An answer',
    error_class: null,
    error: null,
    latency_ms: 120,
    ttft_ms: null,
    tokens_in: 10,
    tokens_out: 5,
    cost_micros: 7,
    cached: false,
    attempts: 1,
    scores: [],
    conversation: null,
    ...over,
  };
}

export function caseView(over: Partial<CaseView> = {}): CaseView {
  return {
    run_id: 7,
    run_name: 'Nightly',
    dataset_kind: 'questions',
    position: 2,
    total: 3,
    previous_case_id: 10,
    next_case_id: 12,
    case: { id: 11, input: { question: 'Capital of France?' }, expected: { output: 'Paris' }, trace: null, tags: ['geo'], difficulty: 'easy', metadata: {} },
    targets: [
      {
        target_id: 1,
        label: 'Fast',
        model_id: 1,
        outputs: [caseOutput({ text: 'The capital is Paris.', scores: [score({ rationale: 'Short and right.' })] })],
      },
      {
        target_id: 2,
        label: 'Slow',
        model_id: 2,
        outputs: [caseOutput({ target_id: 2, label: 'Slow', text: 'The capital city is Paris.' })],
      },
      {
        target_id: 3,
        label: 'Broken',
        model_id: 3,
        outputs: [caseOutput({ target_id: 3, label: 'Broken', status: 'failed', text: null, error_class: 'timeout', error: 'No reply in 30 s', tokens_in: null, tokens_out: null, cost_micros: null, latency_ms: null })],
      },
    ],
    ...over,
  };
}
