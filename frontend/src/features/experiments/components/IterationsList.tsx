import { Link } from 'react-router-dom';
import { cn, focusRing } from '@/lib/cn';
import { formatMicros } from '@/lib/money';
import type { IterationSummary } from '../api';
import { StatusBadge } from './StatusBadge';

const f = (x: number | null) => (x === null ? '—' : x.toFixed(3));

/** Every iteration: status, composites (all / held-out), cost; selecting one opens its dashboard. */
export function IterationsList({ base, items, selected, onSelect }: { base: string; items: IterationSummary[]; selected: number | null; onSelect: (n: number) => void }) {
  if (items.length === 0) return <p className="text-sm text-zinc-600">No iterations yet.</p>;
  return (
    <ul className="space-y-2" aria-label="Iterations">
      {[...items].sort((a, b) => b.number - a.number).map((i) => (
        <li key={i.id}>
          <div className={cn('space-y-1 rounded-xl border p-3', selected === i.number ? 'border-indigo-400 bg-indigo-50/40' : 'border-zinc-200 bg-white')}>
            <div className="flex flex-wrap items-center justify-between gap-2">
              <button type="button" onClick={() => onSelect(i.number)} aria-pressed={selected === i.number} className={cn('rounded-xl text-left text-sm font-medium text-zinc-900 hover:underline', focusRing)}>
                Iteration {i.number}
              </button>
              <StatusBadge status={i.status} paused={i.paused} />
            </div>
            <p className="text-sm text-zinc-600">
              Composite {f(i.composite)} · held-out {f(i.holdout_composite)} · {formatMicros(i.execution_micros + i.judging_micros + i.refinement_micros)}
            </p>
            {i.status === 'awaiting_review' && (
              <Link to={`${base}/iterations/${i.number}/review`} className={cn('text-sm font-medium text-indigo-700 underline', focusRing)}>
                Review the suggestion
              </Link>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}
