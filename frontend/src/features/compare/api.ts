// Run comparison (issue 7 part 6): the diff of a head run against a base run on the same
// dataset (GET /reports/runs/{run_id}/diff/{base_run_id}); types from the generated OpenAPI paths.
import type { paths } from '@/api/schema';

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

export type RunDiff = Json<paths['/api/projects/{project_id}/reports/runs/{run_id}/diff/{base_run_id}']['get']['responses'][200]>;
export type Outcome = RunDiff['cases']['items'][number]['outcome'];
export type DiffCase = RunDiff['cases']['items'][number];
export type DiffTarget = RunDiff['targets'][number];
export type Paired = RunDiff['comparison'];

export const DIFF_PAGE_SIZE = 25;

/** What needs attention first, as the API orders the cases. */
export const OUTCOMES: readonly Outcome[] = [
  'regressed',
  'new_fail',
  'still_failing',
  'fixed',
  'new_pass',
  'still_passing',
  'missing',
];

export const OUTCOME_LABELS: Record<Outcome, string> = {
  regressed: 'Regressed',
  new_fail: 'New fail',
  still_failing: 'Still failing',
  fixed: 'Fixed',
  new_pass: 'New pass',
  still_passing: 'Still passing',
  missing: 'Missing in head',
};

export const OUTCOME_HELP: Record<Outcome, string> = {
  regressed: 'passed in the base run, fails in this one',
  new_fail: 'no verdict in the base run (new or unscored case), fails in this one',
  still_failing: 'failed in both runs',
  fixed: 'failed in the base run, passes in this one',
  new_pass: 'no verdict in the base run, passes in this one',
  still_passing: 'passed in both runs',
  missing: 'no verdict in this run',
};

export const diffPath = (projectId: number, headId: number, baseId: number) =>
  `/api/projects/${projectId}/reports/runs/${headId}/diff/${baseId}`;

export const casePath = (projectId: number, runId: number, caseId: number) =>
  `/projects/${projectId}/runs/${runId}/cases/${caseId}`;

export const comparePath = (projectId: number, head?: number, base?: number) => {
  const q = new URLSearchParams();
  if (head) q.set('head', String(head));
  if (base) q.set('base', String(base));
  const s = q.toString();
  return `/projects/${projectId}/runs/compare${s ? `?${s}` : ''}`;
};

/** The verdict in plain words, naming the runs. */
export function verdictSentence(c: Paired, headName: string, baseName: string): string {
  if (c.n === 0) return 'No case has a score or verdict in both runs: nothing to compare yet.';
  if (c.verdict === 'head better') return `${headName} is better than ${baseName}.`;
  if (c.verdict === 'base better') return `${headName} is worse than ${baseName}.`;
  return `No clear difference between ${headName} and ${baseName} on these ${c.n} ${c.n === 1 ? 'case' : 'cases'}.`;
}

export function signed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  const s = x.toFixed(digits);
  return x > 0 ? `+${s}` : s;
}

export function fixed(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  return x.toFixed(digits);
}

export function pValue(p: number | null | undefined): string {
  if (p === null || p === undefined || Number.isNaN(p)) return '—';
  if (p < 0.001) return '< 0.001';
  return p.toFixed(3);
}

/** A short input preview: the first string value of the case input, else its JSON. */
export function inputPreview(input: Record<string, unknown> | null | undefined, max = 120): string {
  if (!input) return '—';
  const first = Object.values(input).find((v) => typeof v === 'string') as string | undefined;
  const text = first ?? JSON.stringify(input);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
