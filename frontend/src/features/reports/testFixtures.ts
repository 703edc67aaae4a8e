// Report payloads as the API sends them (shapes from the generated OpenAPI types).
import { json, mockFetch } from '@/test/utils';
import { apiError, project } from '@/features/datasets/testFixtures';
import type { ComparisonSummary, CostReport, Leaderboard, LeaderboardRow, QuestionQuality, RunDashboard, RunFacets, RunStatistics, ScoreTrend, TokenUsage } from './api';

type CostKind = CostReport['total']['by_kind'][number]['kind'];
const ts = '2026-11-20T10:00:00Z';
const rate = (k: number, n: number, low: number | null, high: number | null) => ({ k, n, rate: n ? k / n : null, low, high });
const mean = (m: number | null, low: number | null, high: number | null, n_cases = 2, n_values = 4) => ({ mean: m, low, high, n_cases, n_values });

export function row(over: Partial<LeaderboardRow> & Pick<LeaderboardRow, 'model_id' | 'model_name'>): LeaderboardRow {
  return {
    runs: 1,
    outputs: 4,
    succeeded: 4,
    failed: 0,
    success_rate: rate(4, 4, 0.51, 1),
    scores: 4,
    score: mean(0.5, 0.25, 0.75),
    pass_rate: rate(2, 4, 0.15, 0.85),
    spent_micros: 40,
    cost_per_output_micros: 10,
    tokens_in: 40,
    tokens_out: 20,
    tokens_in_per_output: 10,
    tokens_out_per_output: 5,
    latency_p50_ms: 100,
    latency_p95_ms: 200,
    ...over,
  };
}

export const leaderboard = (): Leaderboard => ({
  scorer: { id: 5, name: 'Exact', kind: 'exact_match', versions: [1, 2] },
  confidence: 0.95,
  items: [
    row({ model_id: 1, model_name: 'Fake Smart', score: mean(0.75, 0.5, 1), pass_rate: rate(3, 4, 0.3006, 0.9544), cost_per_output_micros: 30, latency_p50_ms: 400, latency_p95_ms: 900, runs: 2 }),
    row({ model_id: 2, model_name: 'Fake Fast', score: mean(0.5, 0.25, 0.75), pass_rate: rate(2, 4, 0.15, 0.85), cost_per_output_micros: 5, latency_p50_ms: 50, latency_p95_ms: 80 }),
    row({ model_id: 3, model_name: 'Fake Cheap', score: mean(0.25, null, null, 1, 1), pass_rate: rate(1, 4, 0.0456, 0.6994), cost_per_output_micros: 1, latency_p50_ms: null, latency_p95_ms: null }),
  ],
});

export const scorers = () => ({
  items: [
    { id: 9, name: 'Preference', kind: 'pairwise_judge', description: '', archived_at: null, created_at: ts, latest: null },
    { id: 5, name: 'Exact', kind: 'exact_match', description: '', archived_at: null, created_at: ts, latest: null },
    { id: 6, name: 'Judge', kind: 'llm_judge', description: '', archived_at: null, created_at: ts, latest: null },
  ],
  total: 3,
  page: 1,
  page_size: 100,
});

export const quality = (): QuestionQuality => ({
  items: [
    { model_id: 1, name: 'Fake Smart', mean: 7.25, low: 6.5, high: 8, questions: 10, ratings: 20, datasets: 1 },
    { model_id: null, name: 'Written or imported', mean: 6, low: null, high: null, questions: 1, ratings: 2, datasets: 1 },
  ],
});

const kind = (name: CostKind, spent: number) => ({ kind: name, spent_micros: spent, calls: 0, tokens_in: 0, tokens_out: 0 });
const kinds = (calls: number, judges: number, judgeMode: number, generation: number) => [
  kind('model_calls', calls),
  kind('judges', judges),
  kind('judge_mode', judgeMode),
  kind('pairwise_targets', 0),
  kind('pairwise_runs', 0),
  kind('generation', generation),
  kind('scorer_trials', 0),
  kind('critique', 0),
  kind('assist', 0),
  kind('refinement', 0),
  kind('pairwise_judge', 0),
  kind('arena_judge', 0),
  kind('connection_test', 0),
];
/** Sums as the API spells them: the total and its calls, judges and generation parts. */
const sums = (calls: number, judges: number, generation: number, outputs: number, tokensIn: number, tokensOut: number) => ({
  spent_micros: calls + judges + generation,
  calls_micros: calls,
  judge_micros: judges,
  generation_micros: generation,
  outputs,
  tokens_in: tokensIn,
  tokens_out: tokensOut,
});

export const costs = (): CostReport => ({
  total: { ...sums(1_250_000, 300_000, 50_000, 10, 1100, 600), by_kind: kinds(1_250_000, 200_000, 100_000, 50_000) },
  by_model: [
    { model_id: 1, model_name: 'Fake Smart', ...sums(1_000_000, 200_000, 0, 5, 600, 300) },
    { model_id: 2, model_name: 'Fake Fast', ...sums(250_000, 0, 0, 5, 400, 200) },
    { model_id: null, model_name: null, ...sums(0, 100_000, 0, 0, 0, 0) },
    { model_id: 3, model_name: 'Writer', ...sums(0, 0, 50_000, 0, 100, 100) },
  ],
  by_run: [
    { run_id: 78, run_name: 'Judge questions', status: 'completed', created_at: ts, judge_mode: true, ...sums(0, 100_000, 0, 0, 0, 0) },
    { run_id: 77, run_name: 'Nightly', status: 'completed', created_at: ts, judge_mode: false, ...sums(1_250_000, 200_000, 0, 10, 1000, 500) },
  ],
  by_day: [
    { day: '2026-11-19', ...sums(250_000, 0, 50_000, 2, 300, 200) },
    { day: '2026-11-20', ...sums(1_000_000, 300_000, 0, 8, 800, 400) },
  ],
});

export const tokens = (): TokenUsage => ({
  items: [
    { day: '2026-11-19', model_id: 2, model_name: 'Fake Fast', tokens_in: 200, tokens_out: 100, outputs: 2 },
    { day: '2026-11-20', model_id: 1, model_name: 'Fake Smart', tokens_in: 600, tokens_out: 300, outputs: 5 },
  ],
  by_kind: kinds(0, 0, 0, 0).map((k) => (k.kind === 'model_calls' ? { ...k, calls: 7, tokens_in: 800, tokens_out: 400 } : k)),
});

export const emptyCosts = (): CostReport => ({ total: { ...sums(0, 0, 0, 0, 0, 0), by_kind: kinds(0, 0, 0, 0) }, by_model: [], by_run: [], by_day: [] });

export const trend = (): ScoreTrend => ({
  scorer: { id: 5, name: 'Exact', kind: 'exact_match', versions: [1] },
  confidence: 0.95,
  models: [
    { model_id: 2, model_name: 'Fake Fast' },
    { model_id: 1, model_name: 'Fake Smart' },
  ],
  runs: [
    { run_id: 70, name: 'First', created_at: ts, dataset_id: 11, score: mean(0.6, 0.4, 0.8), models: [{ model_id: 2, model_name: 'Fake Fast', score: mean(0.6, 0.4, 0.8) }] },
    {
      run_id: 77,
      name: 'Second',
      created_at: ts,
      dataset_id: 11,
      score: mean(0.7, 0.55, 0.85),
      models: [
        { model_id: 2, model_name: 'Fake Fast', score: mean(0.65, 0.5, 0.8) },
        { model_id: 1, model_name: 'Fake Smart', score: mean(0.75, 0.6, 0.9) },
      ],
    },
  ],
});

export const runsPage = () => ({
  items: [
    { id: 77, name: 'Nightly', status: 'completed' },
    { id: 70, name: 'First', status: 'completed' },
  ],
  total: 2,
  page: 1,
  page_size: 100,
});

const smean = (m: number | null, low: number | null, high: number | null, n_cases = 3) => ({ mean: m, low, high, n_cases, n_values: n_cases, confidence: 0.95 });
const srate = (k: number, n: number, low: number | null, high: number | null) => ({ k, n, estimate: n ? k / n : null, low, high, confidence: 0.95 });
const alpha = (a: number | null) => ({ alpha: a, level: 'interval', n_judges: 2, n_units: 3, n_values: 6, observed_disagreement: 0.1, expected_disagreement: 0.4 });

export const statistics = (): RunStatistics => ({
  run_id: 77,
  scorers: [{ scorer_version_id: 61, scorer_id: 6, name: 'Judge', kind: 'llm_judge', version: 1, pinned: true }],
  items: [
    {
      target_id: 1,
      label: 'Fake Smart',
      model_id: 1,
      scorer_version_id: 61,
      n_outputs: 3,
      n_scored: 3,
      n_failed: 0,
      mean: smean(0.8, 0.7, 0.9),
      pass_rate: srate(2, 3, 0.2077, 0.9385),
      criteria: [
        { name: 'accuracy', n: 3, avg: 4.5, min: 4, max: 5, std: 0.5 },
        { name: 'clarity', n: 3, avg: 3, min: 2, max: 4, std: 0.8165 },
      ],
      flakiness: null,
      agreement: { raters: [{ source: 'fake-a', n: 3, mean: 0.8 }, { source: 'fake-b', n: 3, mean: 0.7 }], alpha: alpha(0.72), kappa: null },
      judge_human: [
        {
          judge: 'fake-a',
          human_scorer_version_id: 62,
          reviewers: 1,
          n: 3,
          judge_only: 0,
          human_only: 0,
          exact_agreement: 2 / 3,
          mean_abs_difference: 0.25,
          alpha: alpha(0.5),
          kappa: { kappa: 0.4, n: 3, dropped: 0, observed_agreement: 0.6667, expected_agreement: 0.4444, weights: 'quadratic' },
        },
      ],
    },
    {
      target_id: 2,
      label: 'Fake Fast',
      model_id: 2,
      scorer_version_id: 61,
      n_outputs: 3,
      n_scored: 2,
      n_failed: 1,
      mean: smean(0.4, 0.2, 0.6, 2),
      pass_rate: srate(1, 2, 0.0945, 0.9055),
      criteria: [{ name: 'accuracy', n: 2, avg: 2, min: 1, max: 3, std: 1 }],
      flakiness: null,
      agreement: null,
      judge_human: [],
    },
  ],
});

const group = (key: string, m: number | null, low: number | null, high: number | null, n = 2) => ({ key, n_outputs: n, n_cases: n, mean: smean(m, low, high, n), pass_rate: srate(1, n, 0.1, 0.9) });

export const facets = (): RunFacets => ({
  run_id: 77,
  scorer: { scorer_version_id: 61, scorer_id: 6, name: 'Judge', kind: 'llm_judge', version: 1, pinned: true },
  length_of: 'input',
  targets: [
    { target_id: 1, label: 'Fake Smart', model_id: 1, n_outputs: 3, by_tag: [group('math', 0.9, 0.8, 1), group('geo', 0.7, 0.6, 0.8)], by_length: [group('S', 0.8, 0.7, 0.9, 3)], by_difficulty: [group('hard', 0.6, null, null, 1)] },
    { target_id: 2, label: 'Fake Fast', model_id: 2, n_outputs: 2, by_tag: [group('math', 0.3, 0.1, 0.5)], by_length: [group('S', 0.4, 0.2, 0.6)], by_difficulty: [] },
  ],
});

const bias = (k: number, n: number, low: number, high: number) => ({ k, n, estimate: k / n, low, high, confidence: 0.95 });

export const comparisons = (): ComparisonSummary => ({
  run_id: 77,
  base_run_id: null,
  pairs: [
    {
      scorer_id: 9,
      scorer_name: 'Preference',
      scorer_version_id: 91,
      version: 1,
      judge: 'fake-a',
      target_a_id: 1,
      target_a_label: 'Fake Smart',
      target_b_id: 2,
      target_b_label: 'Fake Fast',
      comparisons: 10,
      a_wins: 6,
      b_wins: 2,
      ties: 1,
      disagreements: 1,
      errors: 0,
      position_bias: bias(1, 10, 0.0179, 0.4042),
    },
  ],
  ratings: {
    available: true,
    message: null,
    n_comparisons: 10,
    confidence: 0.95,
    items: [
      { target_id: 1, label: 'Fake Smart', rating: 1120, low: 1040, high: 1210, games: 10, wins: 6, ties: 2, losses: 2, flags: [] },
      { target_id: 2, label: 'Fake Fast', rating: 880, low: 790, high: 960, games: 10, wins: 2, ties: 2, losses: 6, flags: [] },
    ],
  },
});

export const noComparisons = (): ComparisonSummary => ({
  run_id: 77,
  base_run_id: null,
  pairs: [],
  ratings: { available: false, message: 'No judged comparisons', n_comparisons: 0, confidence: 0.95, items: [] },
});

/** Serves the project and the given report paths (by pathname); 404 for anything else. */
export function serveReports(routes: Record<string, unknown | (() => Response)>) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path === '/api/projects/3') return json(project('viewer'));
    if (path in routes) {
      const found = routes[path];
      return typeof found === 'function' ? (found as () => Response)() : json(found);
    }
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}


/** A run's dashboard headline as GET /reports/runs/{id}/dashboard gives it. */
export const dashboard = (over: Partial<RunDashboard> = {}) =>
  ({
    run_id: 77,
    name: 'Nightly',
    status: 'completed',
    score: { mean: 0.6, low: 0.45, high: 0.75, n_cases: 3, n_values: 6 },
    scorer: { id: 6, name: 'Judge', kind: 'llm_judge', versions: [1] },
    delta_vs_previous: { previous_run_id: 70, previous: 0.5, absolute: 0.1, percentage: 20 },
    pass_rate: rate(3, 6, 0.1876, 0.8124),
    success_rate: rate(6, 6, 0.6097, 1),
    counts: { total: 6, succeeded: 6, failed: 0, skipped: 0, pending: 0, scored: 6 },
    pairwise_win_rate: 0.75,
    tokens: 1234,
    latency_p50_ms: 120,
    latency_p95_ms: 480,
    ...over,
  }) as RunDashboard;
