// Judge mode (myarena §3.6): judge models rate a dataset's questions. Types come from the
// generated OpenAPI paths.
import type { components } from '@/api/schema';

type Schemas = components['schemas'];

export type JudgmentCreateBody = Schemas['JudgmentCreate'];
export type Criterion = NonNullable<JudgmentCreateBody['criteria']>[number];
export type Judgments = Schemas['Judgments'];
export type JudgedQuestion = Schemas['JudgedQuestion'];
export type Rating = Schemas['Rating'];
export type JudgeSummary = Schemas['JudgeSummary'];
export type Agreement = Schemas['Agreement'];
export type MeanRating = Schemas['MeanRating'];
export type JudgingRun = Schemas['Run'];

export const MAX_JUDGES = 5;
export const MAX_INSTRUCTION = 4000;

/** The predefined criteria, in the order the API lists them, with what the judges check. */
export const CRITERIA: ReadonlyArray<{ key: Criterion; label: string; hint: string }> = [
  { key: 'clarity', label: 'Clarity', hint: 'Unambiguous, self-contained, clear about what a complete answer is.' },
  { key: 'difficulty', label: 'Difficulty', hint: 'Demands real knowledge or reasoning (ambiguity does not count).' },
  { key: 'relevance', label: 'Relevance', hint: 'Tests something worth evaluating and fits the dataset’s purpose.' },
  { key: 'originality', label: 'Originality', hint: 'Not a stock item a model may have memorised.' },
  { key: 'overall', label: 'Overall', hint: 'The question’s quality as an evaluation item, all aspects weighed.' },
];

export function criterionLabel(key: string): string {
  return CRITERIA.find((c) => c.key === key)?.label ?? key;
}

/** A rating on the 1-10 scale as shown: "7" or "7.5". */
export function formatRating(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

export function formatMean(m: MeanRating): string {
  if (m.mean === null) return '—';
  const mean = m.mean.toFixed(1);
  return m.low === null || m.high === null ? mean : `${mean} (${m.low.toFixed(1)}–${m.high.toFixed(1)})`;
}

export type AgreementLevel = 'none' | 'strong' | 'moderate' | 'weak' | 'against';

/**
 * What an alpha means, in words. Thresholds after Krippendorff (2004): α ≥ 0.8 supports
 * conclusions, 0.667 ≤ α < 0.8 only tentative ones; below 0 the judges disagree more
 * than chance would.
 */
export function agreementReading(alpha: number | null, judges: number): { level: AgreementLevel; text: string } {
  if (judges < 2) return { level: 'none', text: 'Agreement needs at least two judges.' };
  if (alpha === null) return { level: 'none', text: 'Not measurable yet: no question rated by two judges, or every rating the same.' };
  if (alpha >= 0.8) return { level: 'strong', text: 'Strong agreement: the judges rate questions alike.' };
  if (alpha >= 0.667) return { level: 'moderate', text: 'Moderate agreement: good enough for tentative conclusions.' };
  if (alpha >= 0) return { level: 'weak', text: 'Weak agreement: the judges often differ; read single ratings with care.' };
  return { level: 'against', text: 'The judges disagree more than chance would: check the criteria and the judges.' };
}

export const judgmentsPath = (projectId: number, datasetId: number, runId: number) =>
  `/projects/${projectId}/datasets/${datasetId}/judgments/${runId}`;
