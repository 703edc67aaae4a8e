import { Card, CardContent, Progress } from '@/components/ui';
import type { Run } from '@/api/types';
import { isTerminal } from '@/api/types';
import type { StreamState } from '@/api/useEventStream';
import { absoluteTime, percentDone } from '@/lib/format';
import { RunStatusBadge, runStatusLabel } from './RunStatusBadge';

const streamText: Record<StreamState, string> = {
  idle: '',
  connecting: 'Connecting to live updates…',
  open: 'Live',
  closed: '',
  error: 'Live updates unavailable; refreshing every few seconds.',
  unsupported: 'Live updates unsupported; refreshing every few seconds.',
};

function duration(run: Run): string | null {
  if (!run.started_at) return null;
  const end = run.finished_at ? new Date(run.finished_at) : null;
  if (!end) return null;
  const s = Math.max(0, Math.round((end.getTime() - new Date(run.started_at).getTime()) / 1000));
  return s < 1 ? 'under a second' : s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function RunProgress({ run, stream }: { run: Run; stream: StreamState }) {
  const pct = percentDone(run.total, run.succeeded, run.failed);
  const done = isTerminal(run.status);
  const tone = run.status === 'completed' ? 'success' : done && run.status !== 'partial' ? 'danger' : 'indigo';
  const took = duration(run);
  return (
    <Card>
      <CardContent className="space-y-4">
        <div className="flex flex-wrap items-center justify-between gap-3">
          <div className="flex items-center gap-3" aria-live="polite">
            <span className="text-sm text-zinc-600">Status</span>
            <RunStatusBadge status={run.status} data-testid="run-status" />
          </div>
          {!done && streamText[stream] && (
            <span className="flex items-center gap-2 text-sm text-zinc-500" data-testid="stream-state">
              {stream === 'open' && <span aria-hidden="true" className="size-2 animate-pulse rounded-xl bg-emerald-500" />}
              {streamText[stream]}
            </span>
          )}
        </div>
        <div className="flex items-center gap-4">
          <Progress value={pct} label="Run progress" tone={tone} className="flex-1" />
          <span className="w-14 text-right text-base font-semibold tabular-nums" data-testid="run-percent">
            {pct}%
          </span>
        </div>
        <dl className="grid grid-cols-3 gap-4">
          {(
            [
              ['Succeeded', run.succeeded, 'text-emerald-700'],
              ['Failed', run.failed, run.failed > 0 ? 'text-red-700' : 'text-zinc-900'],
              ['Total', run.total, 'text-zinc-900'],
            ] as const
          ).map(([label, value, color]) => (
            <div key={label} className="rounded-xl border border-zinc-200 p-3">
              <dt className="text-sm text-zinc-600">{label}</dt>
              <dd className={`text-xl font-semibold tabular-nums ${color}`} data-testid={`run-${label.toLowerCase()}`}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
        {done && (
          <p className="text-sm text-zinc-700" role="status">
            Run {runStatusLabel[run.status].toLowerCase()}: {run.succeeded} succeeded, {run.failed} failed of {run.total}
            {took ? ` in ${took}` : ''}.
          </p>
        )}
        <p className="text-sm text-zinc-500">
          Created {absoluteTime(run.created_at)}
          {run.started_at && ` · started ${absoluteTime(run.started_at)}`}
          {run.finished_at && ` · finished ${absoluteTime(run.finished_at)}`}
        </p>
      </CardContent>
    </Card>
  );
}
