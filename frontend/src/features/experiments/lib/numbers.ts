/** Numbers on screen always with their interval (DESIGN §6). */
export interface Interval {
  value: number | null | undefined;
  low?: number | null;
  high?: number | null;
}

const fmt = (x: number, digits: number) => x.toFixed(digits);

/** "3.42 [3.10, 3.71]"; "—" when there is no value; no brackets when no interval is known. */
export function withCI(value: number | null | undefined, low?: number | null, high?: number | null, digits = 2): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  if (low === null || low === undefined || high === null || high === undefined) return fmt(value, digits);
  return `${fmt(value, digits)} [${fmt(low, digits)}, ${fmt(high, digits)}]`;
}

/** A signed delta with its interval: "+0.31 [+0.05, +0.58]". */
export function signedCI(value: number | null | undefined, low?: number | null, high?: number | null, digits = 2): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const s = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`;
  if (low === null || low === undefined || high === null || high === undefined) return s(value);
  return `${s(value)} [${s(low)}, ${s(high)}]`;
}

/** A rate in percent with its interval: "67% [55%, 77%]". */
export function percentCI(value: number | null | undefined, low?: number | null, high?: number | null): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const p = (x: number) => `${Math.round(x * 100)}%`;
  if (low === null || low === undefined || high === null || high === undefined) return p(value);
  return `${p(value)} [${p(low)}, ${p(high)}]`;
}

export type Verdict = string;

/**
 * The paired verdict in words (core/stats/paired.py: A is the earlier version, B the later):
 * "B better" reads Better, "A better" Worse, an interval spanning zero Not distinguishable.
 */
export function verdictLabel(v: Verdict | null | undefined): string {
  if (!v) return 'No verdict yet';
  const s = v.toLowerCase().replace(/_/g, ' ');
  if (s === 'b better' || s === 'better' || s === 'improved') return 'Better';
  if (s === 'a better' || s === 'worse' || s === 'regressed') return 'Worse';
  if (s.includes('not distinguishable') || s === 'tie') return 'Not distinguishable';
  return v;
}

export const verdictTone = (v: string | null | undefined): 'success' | 'danger' | 'neutral' => {
  const l = verdictLabel(v);
  return l === 'Better' ? 'success' : l === 'Worse' ? 'danger' : 'neutral';
};
