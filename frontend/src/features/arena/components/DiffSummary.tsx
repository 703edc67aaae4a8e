import { cn, focusRing } from '@/lib/cn';
import type { AttemptDiff } from '../types';

const ROWS = [
  { key: 'fixed', icon: '✓', label: 'Fixed', tone: 'text-emerald-800', help: 'missed before, right now' },
  { key: 'regressed', icon: '✗', label: 'Regressed', tone: 'text-red-800', help: 'right before, missed now' },
  { key: 'new_fail', icon: '⚠', label: 'New fail', tone: 'text-amber-800', help: 'a miss with no earlier result' },
] as const;

/** The regression view: what changed since the previous run of the same tab and set. */
export function DiffSummary({ diff, onTrace }: { diff: AttemptDiff; onTrace?: (traceId: string) => void }) {
  return (
    <section aria-label="Changes since the previous run" className="space-y-2" data-testid="diff">
      <h4 className="text-sm font-medium text-zinc-900">{diff.previous_attempt_id == null ? 'First run of this tab and set' : 'Since the previous run'}</h4>
      <ul className="grid grid-cols-3 gap-2">
        {ROWS.map((r) => (
          <li key={r.key} className="rounded-xl border border-zinc-200 p-2 text-center" title={r.help} data-testid={`diff-${r.key}`}>
            <span className={cn('block text-base font-semibold', r.tone)}>
              <span aria-hidden="true">{r.icon}</span> {diff[r.key].length}
            </span>
            <span className="text-sm text-zinc-600">{r.label}</span>
          </li>
        ))}
      </ul>
      {ROWS.filter((r) => diff[r.key].length > 0).map((r) => (
        <p key={r.key} className="flex flex-wrap items-center gap-1 text-sm text-zinc-700">
          <span>{r.label}:</span>
          {diff[r.key].map((id) =>
            onTrace ? (
              <button key={id} type="button" onClick={() => onTrace(id)} className={cn('rounded-xl px-1 font-mono text-indigo-600 hover:text-indigo-700', focusRing)}>
                {id}
              </button>
            ) : (
              <span key={id} className="font-mono">
                {id}
              </span>
            ),
          )}
        </p>
      ))}
    </section>
  );
}
