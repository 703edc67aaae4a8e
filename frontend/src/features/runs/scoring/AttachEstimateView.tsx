import { Alert } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { formatRange } from '../components/ConfirmRunDialog';
import type { AttachEstimate } from './api';

const count = (n: number) => n.toLocaleString('en-US');

function left(micros: number | null): string {
  return micros === null ? 'no cap' : `${formatMicros(micros)} left`;
}

/** What scoring a finished run with the picked versions may cost, and what its caps leave. */
export function AttachEstimateView({ estimate }: { estimate: AttachEstimate }) {
  const e = estimate;
  const tightest = [e.run_budget_left_micros, e.project_budget_left_micros].filter((m): m is number => m !== null);
  const room = tightest.length ? Math.min(...tightest) : null;
  return (
    <div className="space-y-2" data-testid="attach-estimate">
      <div className="flex flex-wrap items-baseline justify-between gap-2 rounded-xl border border-zinc-200 bg-zinc-50 p-3">
        <span className="text-sm font-medium text-zinc-900">
          {count(e.scores)} scores on {count(e.outputs)} outputs
          {e.judge_calls > 0 && ` · ${count(e.judge_calls)} judge calls`}
        </span>
        <span className="text-base font-semibold tabular-nums text-zinc-900" data-testid="attach-cost">
          {e.judge_calls > 0 ? formatRange(e.low_micros, e.high_micros) : formatMicros(0)}
          {!e.complete && <span className="text-sm font-normal text-amber-800"> + unpriced</span>}
        </span>
      </div>
      <p className="text-sm text-zinc-600" data-testid="attach-budget">
        Budget: run {left(e.run_budget_left_micros)}, project {left(e.project_budget_left_micros)}.
      </p>
      {e.unpriced_judges.length > 0 && (
        <p className="text-sm text-amber-800">Unpriced judges, not in the total: {e.unpriced_judges.join(', ')}. Their cost is unknown, not zero.</p>
      )}
      {room !== null && e.high_micros > room && (
        <Alert tone="info">
          The high end is over what the budget leaves: scoring stops when the budget has no room for the next judges, and the
          outputs left are not scored.
        </Alert>
      )}
    </div>
  );
}
