import type { JudgedQuestion, JudgeSummary, Judgments, Rating } from './api';

export const mean = (m: number | null, low: number | null = null, high: number | null = null, n = 2) => ({ mean: m, low, high, n });

export function judge(ref: string, name: string, over: Partial<JudgeSummary> = {}): JudgeSummary {
  return {
    ref, model_id: Number(ref), name, scored: 2, failed: 0, pending: 0, cost_micros: 1200,
    means: { clarity: mean(8, 7, 9), difficulty: mean(4.5, 3, 6) }, overall: mean(6.3, 5, 7.5), ...over,
  };
}

export function rating(judgeRef: string, over: Partial<Rating> = {}): Rating {
  return {
    judge: judgeRef, status: 'scored', scores: { clarity: 8, difficulty: 5 }, overall: 6.5,
    justification: 'Clear and reasonably hard.', rationales: { clarity: 'Unambiguous wording.', difficulty: 'Needs one inference.' }, error: null, ...over,
  };
}

export function question(number: number, ratings: Rating[], over: Partial<JudgedQuestion> = {}): JudgedQuestion {
  return { output_id: 500 + number, case_id: 900 + number, number, question: `Question ${number}?`, ratings, ...over };
}

export function judgments(over: Partial<Judgments> = {}): Judgments {
  return {
    run_id: 77, run_status: 'completed', dataset_version_id: 31, scorer_version_id: 9,
    criteria: ['clarity', 'difficulty'], instruction: null,
    judges: [judge('5', 'Fake Fast'), judge('6', 'Fake Smart')],
    agreement: [
      { criterion: 'clarity', alpha: 0.85, n_units: 2, n_values: 4 },
      { criterion: 'difficulty', alpha: 0.31, n_units: 2, n_values: 4 },
    ],
    overall_agreement: { criterion: 'overall', alpha: -0.2, n_units: 2, n_values: 4 },
    progress: { questions: 2, expected: 4, scored: 4, failed: 0, done: true },
    items: [
      question(1, [rating('5'), rating('6', { scores: { clarity: 7, difficulty: 3 }, overall: 5, justification: 'Fine.' })]),
      question(2, [rating('5', { scores: { clarity: 9.5, difficulty: 4 }, overall: 6.75 }), rating('6', { status: 'failed', scores: {}, overall: null, justification: '', rationales: {}, error: 'Judge reply rejected: not JSON' })]),
    ],
    total: 2, page: 1, page_size: 20, ...over,
  };
}
