import { Link } from 'react-router-dom';
import { Alert, Progress as Bar, buttonClasses } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import type { Progress } from '../api';
import { statusLabel } from './StatusBadge';

const PHASES = ['executing', 'aggregating', 'refining', 'awaiting_review'] as const;

/** Live progress: the current iteration's phase, its cell counts, spend vs budget, a ready suggestion. */
export function LivePanel({ base, progress, streamState, alertAt }: { base: string; progress: Progress; streamState: string; alertAt: number }) {
  const it = progress.iteration;
  const phase = it?.phase ?? null;
  const done = it ? it.succeeded + it.failed + it.skipped : 0;
  const spent = progress.spent_micros;
  const budget = progress.budget_micros;
  const phaseIndex = phase ? PHASES.indexOf(phase as (typeof PHASES)[number]) : -1;
  return (
    <section aria-label="Live progress" className="space-y-3 rounded-xl border border-zinc-200 bg-white p-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-base font-semibold">{it ? `Iteration ${it.number}` : 'No iteration yet'}</h3>
        <span className="text-sm text-zinc-500" data-testid="stream-state">
          {streamState === 'open' ? 'Live' : streamState === 'closed' ? 'Finished' : streamState === 'idle' ? '' : 'Updating by polling'}
        </span>
      </div>
      {it && (
        <ol className="flex flex-wrap gap-1 text-sm" aria-label="Phases">
          {PHASES.map((p, i) => (
            <li
              key={p}
              aria-current={p === phase ? 'step' : undefined}
              className={p === phase ? 'rounded-xl bg-indigo-600 px-2 py-0.5 text-white' : i < phaseIndex ? 'rounded-xl bg-emerald-50 px-2 py-0.5 text-emerald-800' : 'rounded-xl bg-zinc-100 px-2 py-0.5 text-zinc-600'}
            >
              {p === 'executing' ? 'Executing & judging' : statusLabel(p)}
            </li>
          ))}
        </ol>
      )}
      <p className="text-sm text-zinc-700" data-testid="live-phase" aria-live="polite">
        Phase: {phase ? statusLabel(phase) : '—'}
        {it?.paused ? ' (paused)' : ''}
        {it && it.total > 0 ? ` · ${done} of ${it.total} cells${it.failed ? `, ${it.failed} failed` : ''}` : ''}
      </p>
      {it && it.total > 0 && <Bar value={(done / it.total) * 100} label="Cells done" />}
      <p className="text-sm text-zinc-700" data-testid="live-spend">
        Spent {formatMicros(spent)}
        {budget ? ` of ${formatMicros(budget)} (${Math.round((spent / budget) * 100)}%)` : ''} · {progress.tokens.toLocaleString('en-US')} tokens
      </p>
      {budget ? <Bar value={(Math.min(spent, budget) / budget) * 100} label="Budget used" tone={spent / budget >= alertAt ? 'warning' : 'indigo'} /> : null}
      {it?.suggestion_ready && (
        <Alert tone="info">
          <span className="flex flex-wrap items-center justify-between gap-2">
            <span>A refinement suggestion is ready for review.</span>
            <Link to={`${base}/iterations/${it.number}/review`} className={buttonClasses('primary', 'sm')}>
              Review suggestion
            </Link>
          </span>
        </Alert>
      )}
    </section>
  );
}
