// What each rate on screen means, defined once (the backend's core/stats/rates.py counts
// the same way). Every screen that shows a rate labels it with these words.

/** Calls sent: succeeded + failed. A skipped cell (cancelled, out of budget) was never sent. */
export function sentOf(c: { succeeded: number; failed: number }): number {
  return c.succeeded + c.failed;
}

/** Success rate: of the calls sent, the share that got a reply; null before any call ended. */
export function successRate(c: { succeeded: number; failed: number }): number | null {
  const n = sentOf(c);
  return n ? c.succeeded / n : null;
}

/** "12.5%", or "—" without a rate. */
export function formatRate(v: number | null | undefined, digits = 1): string {
  return v === null || v === undefined || Number.isNaN(v) ? '—' : `${(v * 100).toFixed(digits)}%`;
}

/** What the success rate counted: "23 of 23 calls sent · 137 never sent (cancelled)". */
export function successBasis(c: { succeeded: number; failed: number; skipped?: number }, why?: string): string {
  const n = sentOf(c);
  const base = `${c.succeeded.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} ${n === 1 ? 'call' : 'calls'} sent`;
  const skipped = c.skipped ?? 0;
  return skipped > 0 ? `${base} · ${skipped.toLocaleString('en-US')} never sent${why ? ` (${why})` : ''}` : base;
}

/** Why a run's skipped cells were never sent, in a word for the notes above. */
export function skippedWhy(status: string): string | undefined {
  return status === 'cancelled' ? 'cancelled' : status === 'budget_exceeded' ? 'budget reached' : undefined;
}

export const RATE_HELP = {
  success: 'Success rate: of the calls sent, the share that got a reply. Cells never sent (cancelled, over budget) are counted apart.',
  pass: 'Pass rate: of the headline scorer’s verdicts, the share that passed.',
} as const;
