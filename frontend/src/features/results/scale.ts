// A score on its own scale: a reviewer's 1–5 rating reads "4/5" wherever one score is shown;
// the 0–1 value it is stored as (0.75) is the scale of aggregates only.

interface Entered {
  rating?: unknown;
  criteria?: Record<string, unknown>;
}

interface ScaledScore {
  kind: string;
  value: number | null | undefined;
  details?: unknown;
  /** The grid gives the entered rating directly. */
  rating?: number | null;
}

function entered(s: Pick<ScaledScore, 'kind' | 'details'>): Entered | null {
  if (s.kind !== 'manual' || typeof s.details !== 'object' || s.details === null) return null;
  const e = (s.details as { entered?: unknown }).entered;
  return typeof e === 'object' && e !== null ? (e as Entered) : null;
}

const outOfFive = (n: number) => `${Number.isInteger(n) ? n : n.toFixed(1)}/5`;

/** "4/5" for a manual rating (the mean of its criteria's ratings on a per-criterion scale), else the 0–1 value. */
export function scoreOnScale(s: ScaledScore): string {
  if (s.value === null || s.value === undefined) return '—';
  if (s.kind === 'manual' && typeof s.rating === 'number') return outOfFive(s.rating);
  const e = entered(s);
  if (e && typeof e.rating === 'number') return outOfFive(e.rating);
  const ratings = Object.values(e?.criteria ?? {}).filter((v): v is number => typeof v === 'number');
  if (ratings.length) return outOfFive(ratings.reduce((a, b) => a + b, 0) / ratings.length);
  return s.value.toFixed(2);
}

/** One criterion of a score: a reviewer's rating of it ("4/5"), else its 0–1 value. */
export function criterionOnScale(s: Pick<ScaledScore, 'kind' | 'details'>, name: string, value: number): string {
  const rating = entered(s)?.criteria?.[name];
  return typeof rating === 'number' ? outOfFive(rating) : value.toFixed(2);
}
