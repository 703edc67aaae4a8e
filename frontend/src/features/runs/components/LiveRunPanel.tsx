import { useEffect, useState, type ReactNode } from 'react';
import { Card, CardContent, Progress as Bar } from '@/components/ui';
import { isTerminal } from '@/api/types';
import { formatMicros } from '@/lib/money';
import type { Progress } from '../api';
import { elapsedNow, etaNow, formatDuration, percentOf, sentOf, stoppedShort } from '../live';
import { runStatusLabel } from './RunStatusBadge';

function useNow(active: boolean, ms = 1000) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [active, ms]);
  return now;
}

type PhaseState = 'done' | 'partial' | 'active' | 'paused' | 'waiting' | 'stopped';
// Only a run with every cell succeeded gets the green tick; a partial or failed one is amber.
const phaseIcon: Record<PhaseState, string> = { done: '✓', partial: '!', active: '•', paused: '‖', waiting: '·', stopped: '■' };
const phaseColor: Record<PhaseState, string> = {
  done: 'text-emerald-700',
  partial: 'text-amber-800',
  active: 'text-indigo-700',
  paused: 'text-amber-800',
  waiting: 'text-zinc-500',
  stopped: 'text-amber-800',
};

/** What the executing phase says when the run ended before every cell was sent. */
function stoppedDetail(p: Progress, pct: number): string {
  const why = p.status === 'cancelled' ? 'Cancelled' : p.status === 'budget_exceeded' ? 'Stopped by the budget' : 'Stopped';
  return p.skipped > 0 ? `${why} at ${pct}% · ${p.skipped.toLocaleString('en-US')} never sent` : `${why} at ${pct}%`;
}

function Phase({ n, title, state, detail, children }: { n: number; title: string; state: PhaseState; detail: string; children?: ReactNode }) {
  return (
    <li className="space-y-3 p-4" data-testid={`phase-${n}`}>
      <div className="flex items-center justify-between gap-3">
        <span className="text-base font-medium text-zinc-900">
          {n}. {title}
        </span>
        <span className={`text-sm ${phaseColor[state]}`}>
          <span aria-hidden="true">{phaseIcon[state]} </span>
          {detail}
        </span>
      </div>
      {children}
    </li>
  );
}

/** The edison FR-EE-002 layout: phases with one bar per target, then cost, tokens, elapsed and ETA. */
export function LiveRunPanel({ progress, receivedAt }: { progress: Progress; receivedAt: number }) {
  const p = progress;
  const running = p.status === 'running';
  const now = useNow(running);
  const terminal = isTerminal(p.status);
  const pct = percentOf(p.done, p.total);
  const planned = p.status !== 'pending' || p.total > 0;
  const stopped = stoppedShort(p);
  const endedWithFailures = terminal && !stopped && p.status !== 'completed';
  const execState: PhaseState = stopped ? 'stopped' : endedWithFailures ? 'partial' : terminal ? 'done' : p.status === 'paused' ? 'paused' : p.status === 'running' ? 'active' : 'waiting';
  const execDetail =
    execState === 'waiting'
      ? 'Waiting'
      : execState === 'paused'
        ? `Paused (${pct}%)`
        : execState === 'active'
          ? `In progress (${pct}%)`
          : execState === 'stopped'
            ? stoppedDetail(p, pct)
            : execState === 'partial'
              ? `Ended (${pct}%) · ${p.failed.toLocaleString('en-US')} failed`
              : `Done (${pct}%)`;
  const elapsed = elapsedNow(p, receivedAt, now);
  const eta = etaNow(p, receivedAt, now);
  const tokens = p.tokens_in + p.tokens_out;
  const tone = p.status === 'failed' || p.status === 'budget_exceeded' ? 'danger' : stopped || p.status === 'partial' ? 'warning' : p.status === 'completed' ? 'success' : 'indigo';

  return (
    <Card>
      <CardContent className="space-y-5">
        <ol className="divide-y divide-zinc-200 rounded-xl border border-zinc-200" aria-label="Run phases">
          <Phase n={1} title="Planning" state={planned ? 'done' : 'active'} detail={planned ? `Complete (${p.total.toLocaleString('en-US')} cells)` : 'In progress'} />
          <Phase n={2} title="Executing" state={execState} detail={execDetail}>
            <div className="flex items-center gap-4">
              <Bar value={pct} label="Run progress" tone={tone} className="flex-1" />
              <span className="w-14 text-right text-base font-semibold tabular-nums" data-testid="run-percent">
                {pct}%
              </span>
            </div>
            {p.targets.length > 0 && (
              <ul className="space-y-2" aria-label="Progress per target">
                {p.targets.map((t) => {
                  const done = sentOf(t);
                  const tp = percentOf(done, t.total);
                  const barTone = t.failed > 0 ? 'danger' : t.skipped > 0 ? 'warning' : done >= t.total && t.total > 0 ? 'success' : 'indigo';
                  return (
                    <li key={t.target_id} className="grid grid-cols-1 items-center gap-x-4 gap-y-1 sm:grid-cols-[minmax(8rem,16rem)_1fr_auto]" data-testid={`target-${t.target_id}`}>
                      <span className="truncate text-sm text-zinc-900" title={t.label}>
                        {t.label}
                      </span>
                      <Bar value={tp} label={`Progress of ${t.label}`} tone={barTone} className="h-2" />
                      <span className="text-sm tabular-nums text-zinc-600" data-testid={`target-${t.target_id}-counts`}>
                        {done}/{t.total}
                        {t.failed > 0 && <span className="text-red-700"> · {t.failed} failed</span>}
                        {t.skipped > 0 && <span className="text-amber-800"> · {t.skipped} skipped</span>}
                      </span>
                    </li>
                  );
                })}
              </ul>
            )}
          </Phase>
          <Phase
            n={3}
            title="Finished"
            state={stopped ? 'stopped' : endedWithFailures ? 'partial' : terminal ? 'done' : 'waiting'}
            detail={terminal ? runStatusLabel[p.status] : 'Waiting'}
          />
        </ol>

        <dl className="grid grid-cols-2 gap-3 lg:grid-cols-4">
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-sm text-zinc-600">Cost so far</dt>
            <dd className="text-base font-semibold tabular-nums" data-testid="run-cost">
              {formatMicros(p.spent_micros)}
              {p.budget_micros !== null && (
                <span className="font-normal text-zinc-600">
                  {' '}
                  / {formatMicros(p.budget_micros)} budget ({percentOf(p.spent_micros, p.budget_micros)}%)
                </span>
              )}
            </dd>
            {p.budget_micros !== null && (
              <dd><Bar value={percentOf(p.spent_micros, p.budget_micros)} label="Budget used" className="mt-2 h-2" tone={p.spent_micros >= p.budget_micros ? 'danger' : 'indigo'} /></dd>
            )}
            {(p.judge_spent_micros ?? 0) > 0 && (
              <dd className="mt-1 text-sm text-zinc-600" data-testid="run-judge-cost">of which {formatMicros(p.judge_spent_micros ?? 0)} for LLM judges</dd>
            )}
            {p.reserved_micros > 0 && !terminal && (
              <dd className="mt-1 text-sm text-zinc-600">{formatMicros(p.reserved_micros)} reserved for calls in flight and their judges</dd>
            )}
            {p.project_budget_micros !== null && p.project_budget_micros !== undefined && (
              <dd className="mt-1 text-sm text-zinc-600" data-testid="project-budget">
                Project: {formatMicros(p.project_spent_micros ?? 0)} / {formatMicros(p.project_budget_micros)} (
                {percentOf(p.project_spent_micros ?? 0, p.project_budget_micros)}%)
              </dd>
            )}
          </div>
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-sm text-zinc-600">Tokens used</dt>
            <dd className="text-base font-semibold tabular-nums" data-testid="run-tokens">
              {tokens.toLocaleString('en-US')}
            </dd>
            <dd className="text-sm text-zinc-600">
              {p.tokens_in.toLocaleString('en-US')} in · {p.tokens_out.toLocaleString('en-US')} out
            </dd>
          </div>
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-sm text-zinc-600">Elapsed time</dt>
            <dd className="text-base font-semibold tabular-nums" data-testid="run-elapsed">
              {elapsed === null ? '—' : formatDuration(elapsed)}
            </dd>
          </div>
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-sm text-zinc-600">Estimated completion</dt>
            <dd className="text-base font-semibold tabular-nums" data-testid="run-eta">
              {stopped ? runStatusLabel[p.status] : terminal ? 'Done' : p.status === 'paused' ? 'Paused' : eta === null ? '—' : `~${formatDuration(eta)}`}
            </dd>
          </div>
        </dl>

        <dl className="grid grid-cols-4 gap-3 text-sm">
          {(
            [
              ['Succeeded', p.succeeded, 'text-emerald-700'],
              ['Failed', p.failed, p.failed > 0 ? 'text-red-700' : 'text-zinc-900'],
              ['Skipped', p.skipped, p.skipped > 0 ? 'text-amber-800' : 'text-zinc-900'],
              ['Total', p.total, 'text-zinc-900'],
            ] as const
          ).map(([label, value, color]) => (
            <div key={label} className="rounded-xl border border-zinc-200 p-3">
              <dt className="text-zinc-600">{label}</dt>
              <dd className={`text-xl font-semibold tabular-nums ${color}`} data-testid={`run-${label.toLowerCase()}`}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
        {p.error && (
          <p className="text-sm text-red-800" role="status">
            Stopped: {p.error}
          </p>
        )}
      </CardContent>
    </Card>
  );
}
