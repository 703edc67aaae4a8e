import { cn } from '@/lib/cn';
import { OUTCOME_HELP, OUTCOME_LABELS, type Outcome, type RunDiff } from '../api';

const MAIN: { key: Outcome; tone: string }[] = [
  { key: 'fixed', tone: 'border-emerald-200 bg-emerald-50 text-emerald-900' },
  { key: 'regressed', tone: 'border-red-200 bg-red-50 text-red-900' },
  { key: 'new_fail', tone: 'border-amber-200 bg-amber-50 text-amber-900' },
];
const REST: Outcome[] = ['still_failing', 'new_pass', 'still_passing', 'missing'];

/** Fixed, regressed and new fail up front; the other outcomes in one line under them. */
export function DiffCounters({
  counts,
  verdictsFrom,
  scorerName,
}: {
  counts: RunDiff['counts'];
  verdictsFrom: RunDiff['verdicts_from'];
  scorerName: string | null;
}) {
  return (
    <section aria-labelledby="diff-counts-heading" className="space-y-3">
      <h2 id="diff-counts-heading" className="text-base font-semibold text-zinc-900">
        Case by case
      </h2>
      <dl className="grid gap-4 sm:grid-cols-3">
        {MAIN.map(({ key, tone }) => (
          <div key={key} className={cn('rounded-xl border p-4', tone)}>
            <dt className="text-sm font-medium">{OUTCOME_LABELS[key]}</dt>
            <dd className="text-xl font-semibold tabular-nums" data-testid={`count-${key}`}>
              {counts[key]}
            </dd>
            <dd className="text-sm">{OUTCOME_HELP[key]}</dd>
          </div>
        ))}
      </dl>
      <p className="text-sm text-zinc-600">
        {REST.map((k) => `${OUTCOME_LABELS[k]}: ${counts[k]}`).join(' · ')}. Counted per case and matched target; pass or fail
        {verdictsFrom === 'scorer' && scorerName ? ` from the scorer ${scorerName}` : ' from the outputs’ status'}.
      </p>
    </section>
  );
}
