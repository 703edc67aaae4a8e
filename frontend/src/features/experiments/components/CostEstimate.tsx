import { formatMicros } from '@/lib/money';
import type { Estimate } from '../api';

/** The running estimate for the whole experiment: execution + judging + refinement, all iterations. */
export function CostEstimate({ estimate, loading, error }: { estimate?: Estimate; loading?: boolean; error?: string | null }) {
  const problems = estimate ? Object.values(estimate.problems ?? {}).flat() : [];
  const per = estimate?.per_iteration;
  return (
    <section aria-label="Cost estimate" className="space-y-1 rounded-xl border border-zinc-200 bg-white p-3 text-sm" aria-live="polite">
      <h2 className="font-semibold text-zinc-900">Estimated cost</h2>
      {estimate && problems.length === 0 ? (
        <>
          <p className="text-lg font-semibold tabular-nums" data-testid="estimate-range">
            {formatMicros(estimate.low_micros)} – {formatMicros(estimate.high_micros)}
          </p>
          <p className="text-zinc-600">
            {estimate.iterations.low}–{estimate.iterations.high} iterations × {estimate.calls_per_iteration} calls on {estimate.cases} cases.
          </p>
          {per && (
            <ul className="text-zinc-600" aria-label="Per iteration">
              <li className="font-medium text-zinc-700">Per iteration</li>
              {(['execution', 'judging', 'refinement'] as const).map((k) => (
                <li key={k} className="flex flex-wrap justify-between gap-x-2">
                  <span className="capitalize">{k}</span>
                  <span className="tabular-nums">
                    {formatMicros(per[k].low_micros)}–{formatMicros(per[k].high_micros)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          {!estimate.complete && <p className="text-amber-800">Some models are unpriced and left out of the totals.</p>}
        </>
      ) : (
        <p className="text-zinc-600">{loading ? 'Estimating…' : problems.length ? `Not yet: ${problems[0]}` : (error ?? 'Pick models and data to see an estimate.')}</p>
      )}
    </section>
  );
}
