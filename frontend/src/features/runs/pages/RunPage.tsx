import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { Alert, buttonClasses, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { isTerminal, roleAtLeast } from '@/api/types';
import { useEventStream, type StreamState } from '@/api/useEventStream';
import { useProject } from '@/features/projects/hooks/useProjects';
import { absoluteTime } from '@/lib/format';
import { formatMicros } from '@/lib/money';
import { cn, focusRing } from '@/lib/cn';
import type { Progress } from '../api';
import { FailuresList } from '../components/FailuresList';
import { LiveRunPanel } from '../components/LiveRunPanel';
import { OutputsTable } from '../components/OutputsTable';
import { RunControls } from '../components/RunControls';
import { RunExports } from '../components/RunExports';
import { RunStatusBadge } from '../components/RunStatusBadge';
import { SummaryTable } from '../components/SummaryTable';
import { useProgress, useRun } from '../hooks/useRuns';
import { progressFromRun } from '../live';
import { ResultsLinks } from '@/features/results/components/ResultsLinks';
import { AddScorersAction } from '../scoring/AddScorersAction';
import { PairwiseSection } from '../scoring/PairwiseSection';
import { RunHeadline } from '@/features/reports/components/RunInsights';

export const FALLBACK_POLL_MS = 3000;
export const SAFETY_POLL_MS = 10_000;

const DOWN: StreamState[] = ['reconnecting', 'error', 'unsupported'];

export function RunPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const runId = Number(params.runId);
  const project = useProject(projectId);
  const live = useLiveRun(projectId, runId);
  const run = live.run;

  if (run.isPending) {
    return (
      <div role="status" aria-label="Loading run" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  }
  if (run.isError) {
    if (isApiError(run.error) && run.error.status === 404) {
      return (
        <EmptyState
          title="Run not found"
          action={
            <Link to={`/projects/${projectId}`} className={buttonClasses('secondary')}>
              Back to the project
            </Link>
          }
        />
      );
    }
    return <ErrorState title="Could not load the run" error={run.error} onRetry={() => run.refetch()} retrying={run.isFetching} />;
  }

  const r = run.data;
  const p = live.progress;
  const name = r.name || `Run #${r.id}`;
  const canEdit = roleAtLeast(project.data?.role, 'editor');
  const terminal = isTerminal(p.status);
  const targets = (r.targets ?? []).map((t) => ({ id: t.id, label: t.label }));
  const threshold = r.alert_threshold ?? 0.8;
  const alerted =
    p.status === 'budget_exceeded' ||
    live.budgetAlert ||
    (p.budget_micros !== null && p.budget_micros > 0 && p.spent_micros >= p.budget_micros * threshold);

  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-500">
        <Link to="/projects" className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          Projects
        </Link>{' '}
        /{' '}
        <Link to={`/projects/${projectId}`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          {project.data?.name ?? 'Project'}
        </Link>{' '}
        / <span className="text-zinc-900">{name}</span>
      </nav>
      <header className="flex flex-wrap items-start justify-between gap-4">
        <div className="space-y-1">
          <div className="flex flex-wrap items-center gap-3" aria-live="polite">
            <h1 className="text-xl font-semibold">{name}</h1>
            <RunStatusBadge status={p.status} data-testid="run-status" />
            {!terminal && <StreamIndicator state={live.stream.state} />}
          </div>
          <p className="text-sm text-zinc-500">
            Created {absoluteTime(r.created_at)}
            {r.started_at && ` · started ${absoluteTime(r.started_at)}`}
            {r.finished_at && ` · finished ${absoluteTime(r.finished_at)}`}
            {r.settings && ` · ${r.settings.repeats} ${r.settings.repeats === 1 ? 'repeat' : 'repeats'}`}
            {r.settings?.rag &&
              ` · answers from ${r.settings.rag.document_ids.length} ${r.settings.rag.document_ids.length === 1 ? 'document' : 'documents'}, ${r.settings.rag.top_k ?? 4} chunks per question`}
          </p>
        </div>
        <div className="flex flex-col items-end gap-2">
          {canEdit && <RunControls projectId={projectId} runId={runId} progress={p} version={r.row_version} />}
          <RunExports projectId={projectId} runId={runId} />
          {canEdit && terminal && <AddScorersAction projectId={projectId} run={r} />}
        </div>
      </header>
      <ResultsLinks projectId={projectId} runId={runId} />

      {alerted &&
        (p.status === 'budget_exceeded' ? (
          <Alert>
            <span data-testid="budget-alert">
              Budget exceeded: {formatMicros(p.spent_micros)} spent
              {p.budget_micros !== null ? ` of ${formatMicros(p.budget_micros)}` : ''}; the next calls could have gone over the cap,
              so the remaining cells were skipped.
            </span>
          </Alert>
        ) : (
          p.budget_micros !== null && (
          <div role="status" className="rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
            <span data-testid="budget-alert">
              Budget alert: {formatMicros(p.spent_micros)} spent, {Math.round(threshold * 100)}% of the {formatMicros(p.budget_micros)} budget
              reached.
            </span>
          </div>
          )
        ))}

      <LiveRunPanel progress={p} receivedAt={live.receivedAt} />

      {terminal && <RunHeadline projectId={projectId} runId={runId} scorerId={null} canPin={canEdit} />}

      <Card>
        <CardHeader>
          <CardTitle>Failures</CardTitle>
        </CardHeader>
        <CardContent>
          <FailuresList projectId={projectId} runId={runId} progress={p} canEdit={canEdit} />
        </CardContent>
      </Card>

      {terminal && <PairwiseSection projectId={projectId} run={r} canEdit={canEdit} />}

      <Card>
        <CardHeader>
          <CardTitle>Summary per target</CardTitle>
        </CardHeader>
        <CardContent>
          <SummaryTable projectId={projectId} runId={runId} status={p.status} />
        </CardContent>
      </Card>

      <section aria-labelledby="outputs-heading" className="space-y-3">
        <h2 id="outputs-heading" className="text-xl font-semibold">
          Outputs
        </h2>
        <OutputsTable projectId={projectId} runId={runId} targets={targets} errorClasses={Object.keys(p.errors ?? {})} />
      </section>
    </div>
  );
}

function StreamIndicator({ state }: { state: StreamState }) {
  if (state === 'open') {
    return (
      <span className="flex items-center gap-2 text-sm text-zinc-500" data-testid="stream-state">
        <span aria-hidden="true" className="size-2 animate-pulse rounded-xl bg-emerald-500" />
        Live
      </span>
    );
  }
  if (state === 'connecting') {
    return (
      <span className="text-sm text-zinc-500" data-testid="stream-state">
        Connecting…
      </span>
    );
  }
  if (DOWN.includes(state)) {
    return (
      <span className="text-sm text-amber-800" data-testid="stream-state" role="status">
        Reconnecting… (refreshing every {FALLBACK_POLL_MS / 1000} s)
      </span>
    );
  }
  return null;
}

/**
 * The run and its progress, kept live by the event stream. While the stream is down
 * (the browser retries, gave up, or has no EventSource) GET /progress is polled every 3 s.
 */
function useLiveRun(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  const [streamDown, setStreamDown] = useState(false);
  const [budgetAlert, setBudgetAlert] = useState(false);
  const run = useRun(projectId, runId);
  const active = run.isSuccess && !isTerminal(run.data.status);
  const stream = useEventStream(projectId, runId, {
    enabled: active,
    onEvent: (e) => {
      if (e.type === 'run.budget_alert') setBudgetAlert(true);
    },
  });
  useEffect(() => setStreamDown(DOWN.includes(stream.state)), [stream.state]);
  // 3 s while the stream is down; a slow safety net while it is up, in case it stalls silently.
  const pollMs = streamDown ? FALLBACK_POLL_MS : active ? SAFETY_POLL_MS : false;
  const progressQuery = useProgress(projectId, runId, { pollMs, enabled: run.isSuccess });

  // A polled change of counters refreshes the outputs and summary; a change of status, the run.
  const polled = progressQuery.data;
  const done = polled?.done ?? 0;
  const polledStatus = polled?.status;
  useEffect(() => {
    if (!polledStatus) return;
    void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) }, { cancelRefetch: false });
    void queryClient.invalidateQueries({ queryKey: qk.summary(projectId, runId) }, { cancelRefetch: false });
  }, [done, polledStatus, queryClient, projectId, runId]);
  useEffect(() => {
    if (polledStatus && polledStatus !== queryClient.getQueryData<{ status: string }>(qk.run(projectId, runId))?.status) {
      void queryClient.invalidateQueries({ queryKey: qk.run(projectId, runId), exact: true });
    }
  }, [polledStatus, queryClient, projectId, runId]);

  // The freshest of the two: /progress (or the stream's events) when it has answered, else the run's own counters.
  let progress: Progress | null = null;
  if (run.data) {
    const fromRun = progressFromRun(run.data);
    progress = polled ? { ...polled, status: pickStatus(polled, fromRun) } : fromRun;
  }
  return { run, stream, progress: progress!, receivedAt: progressQuery.dataUpdatedAt || Date.now(), budgetAlert };
}

/** A control action answers with the run before the next progress: trust the run's status when it is newer. */
function pickStatus(polled: Progress, fromRun: Progress): Progress['status'] {
  if (isTerminal(fromRun.status) && !isTerminal(polled.status)) return fromRun.status;
  return polled.status;
}
