import type { RunSummary, Output, Progress, Run, RunTarget, TargetProgress } from './api';

export const ts = '2024-01-01T00:00:00Z';

export function runTarget(over: Partial<RunTarget> = {}): RunTarget {
  return {
    id: 11, model_id: 5, model_name: 'Fake Fast', label: 'Fake Fast', params: {}, prompt_version_id: null,
    total: 4, succeeded: 0, failed: 0, skipped: 0, spent_micros: 0, tokens_in: 0, tokens_out: 0, ...over,
  };
}

export function run(over: Partial<Run> = {}): Run {
  return {
    id: 7, row_version: 1, headline_scorer_id: null, name: 'Nightly', status: 'pending', total: 8, succeeded: 0, failed: 0, skipped: 0, dataset_id: 4, dataset_version_id: 9,
    settings: { repeats: 1, concurrency: null, cache: true, stream: false, timeout_s: null, max_retries: 2, max_history_pairs: 10, shards: null, rag: null },
    budget_micros: 1_000_000, alert_threshold: 0.8, spent_micros: 0, judge_spent_micros: 0, reserved_micros: 0, tokens_in: 0, tokens_out: 0, error: null,
    targets: [runTarget(), runTarget({ id: 12, model_id: 6, model_name: 'Fake Slow', label: 'Fake Slow' })], scorers: [],
    created_at: ts, started_at: null, finished_at: null, ...over,
  };
}

export function targetProgress(over: Partial<TargetProgress> = {}): TargetProgress {
  return {
    target_id: 11, label: 'Fake Fast', total: 4, succeeded: 0, failed: 0, skipped: 0, spent_micros: 0, tokens_in: 0, tokens_out: 0, errors: {},
    ...over,
  };
}

/** A Progress payload: `a` and `b` are the two targets' [succeeded, failed]. */
export function progress(status: Progress['status'], a: [number, number], b: [number, number], over: Partial<Progress> = {}): Progress {
  const succeeded = a[0] + b[0];
  const failed = a[1] + b[1];
  return {
    run_id: 7, status, total: 8, done: succeeded + failed, succeeded, failed, skipped: 0,
    spent_micros: 100_000 * succeeded, judge_spent_micros: 0, reserved_micros: 0, budget_micros: 1_000_000, project_budget_micros: null, project_spent_micros: 0,
    tokens_in: 10 * succeeded, tokens_out: 5 * succeeded, elapsed_s: 10, eta_s: 20, started_at: '2024-01-01T00:00:01Z',
    finished_at: null, error: null, errors: failed ? { timeout: failed } : {},
    targets: [
      targetProgress({ succeeded: a[0], failed: a[1], spent_micros: 100_000 * a[0], errors: a[1] ? { timeout: a[1] } : {} }),
      targetProgress({ target_id: 12, label: 'Fake Slow', succeeded: b[0], failed: b[1], spent_micros: 100_000 * b[0], errors: b[1] ? { timeout: b[1] } : {} }),
    ],
    ...over,
  };
}

export function output(id: number, over: Partial<Output> = {}): Output {
  return {
    id, case_id: id, case_number: id, target_id: 11, model_id: 5, label: 'Fake Fast', repeat: 0, turn: 0, status: 'succeeded', text: `answer ${id}`,
    error_class: null, error: null, latency_ms: 100, ttft_ms: null, tokens_in: 10, tokens_out: 8, cost_micros: 100_000, cached: false,
    attempts: 1, retrieved: null, ...over,
  };
}

export const summary = {
  success_rate: 0.75,
  targets: [
    {
      target_id: 11, label: 'Fake Fast', model_id: 5, total: 4, succeeded: 3, failed: 1, skipped: 0, pending: 0, success_rate: 0.75,
      spent_micros: 300_000, tokens_in: 30, tokens_out: 15, cached: 0, latency_p50_ms: 101, latency_p95_ms: 190,
      ttft_p50_ms: null, ttft_p95_ms: null, errors: { timeout: 1 },
    },
  ],
  scoring: [] as RunSummary['scoring'],
};
