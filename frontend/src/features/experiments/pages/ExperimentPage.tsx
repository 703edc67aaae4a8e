import { useState } from 'react';
import { Link, Navigate, useParams } from 'react-router-dom';
import { useQueries } from '@tanstack/react-query';
import { Alert, ErrorState, Skeleton, buttonClasses } from '@/components/ui';
import { iterationPath, request, type Iteration } from '../api';
import { expKeys, useExperiment, useIterations, useProgress } from '../hooks/useExperiments';
import { useExperimentStream } from '../hooks/useExperimentStream';
import { trendPoints } from '../lib/aggregate';
import { StatusBadge } from '../components/StatusBadge';
import { ExperimentControls } from '../components/ExperimentControls';
import { LivePanel } from '../components/LivePanel';
import { TrendChart } from '../components/TrendChart';
import { IterationsList } from '../components/IterationsList';
import { IterationDashboard } from '../components/IterationDashboard';
import { IterationFacets } from '../components/IterationFacets';
import { SideBySide } from '../components/SideBySide';

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** One experiment: live progress over SSE, iterations, per-iteration dashboard, trend, outputs. */
export function ExperimentPage() {
  const projectId = Number(useParams().projectId);
  const experimentId = Number(useParams().experimentId);
  const experiment = useExperiment(projectId, experimentId);
  const live = !!experiment.data && !ENDED.has(experiment.data.status) && experiment.data.status !== 'draft';
  const stream = useExperimentStream(projectId, experimentId, { enabled: live });
  const progress = useProgress(projectId, experimentId, live && stream.state !== 'open' ? 3000 : false);
  // The phase or iteration moved: the list follows (the stream invalidates the experiment).
  const iterations = useIterations(projectId, experimentId, `${progress.data?.status}-${progress.data?.iteration?.number}-${progress.data?.iteration?.phase}`);
  const items = iterations.data ?? [];
  const details = useQueries({
    queries: items.map((i) => ({
      queryKey: [...expKeys.iteration(projectId, experimentId, i.number), i.status, i.composite],
      queryFn: ({ signal }: { signal: AbortSignal }) => request<Iteration>('GET', iterationPath(projectId, experimentId, i.number), { signal }),
      enabled: i.composite !== null,
    })),
  });
  const latest = items.reduce((m, i) => Math.max(m, i.number), 0);
  const [selected, setSelected] = useState<number | null>(null);
  const shown = selected ?? latest;
  const detailOf = (n: number) => details[items.findIndex((i) => i.number === n)]?.data ?? null;

  if (experiment.isPending) return <Skeleton className="h-64 w-full" />;
  if (experiment.isError) return <ErrorState title="Could not load the experiment" error={experiment.error} onRetry={() => experiment.refetch()} retrying={experiment.isFetching} />;
  const e = experiment.data;
  if (e.status === 'draft') return <Navigate to={`/projects/${projectId}/experiments/${e.id}/edit`} replace />;
  const base = `/projects/${projectId}/experiments/${e.id}`;
  const alertAt = Number((e.config.stop as { budget_alert_threshold?: number }).budget_alert_threshold ?? 0.8);
  const ended = ENDED.has(e.status) || progress.data?.ended;
  const shownDetail = detailOf(shown);
  return (
    <div className="min-w-0 space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 space-y-1">
          <p className="text-sm">
            <Link to={`/projects/${projectId}/experiments`} className="text-zinc-600 hover:text-zinc-900">
              Experiments
            </Link>
          </p>
          <h2 className="flex flex-wrap items-center gap-2 break-words text-lg font-semibold">
            {e.name} <StatusBadge status={progress.data?.status ?? e.status} />
          </h2>
          {(progress.data?.stop_reason ?? e.stop_reason) && (
            <p className="text-sm text-zinc-700" data-testid="stop-reason">
              Stopped: {progress.data?.stop_detail ?? e.stop_detail ?? (progress.data?.stop_reason ?? e.stop_reason ?? '').replace(/_/g, ' ')}
            </p>
          )}
        </div>
        <div className="flex flex-wrap gap-2">
          <Link to={`${base}/lineage`} className={buttonClasses('secondary')}>
            Prompt lineage
          </Link>
          {(ended || items.length > 0) && (
            <Link to={`${base}/report`} className={buttonClasses(ended ? 'primary' : 'secondary')}>
              {ended ? 'Final report' : 'Report so far'}
            </Link>
          )}
        </div>
      </div>
      {!ended && <ExperimentControls projectId={projectId} experiment={e} paused={progress.data?.iteration?.paused ?? false} />}
      {!ended && progress.data && <LivePanel base={base} progress={progress.data} streamState={stream.state} alertAt={alertAt} />}
      {e.status === 'failed' && <Alert>{e.stop_detail ?? 'The experiment failed.'}</Alert>}
      <section aria-label="Trend" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-4">
        <h3 className="text-base font-semibold">Score trend</h3>
        <TrendChart points={trendPoints(items, details.map((d) => d.data))} />
      </section>
      <div className="grid gap-4 lg:grid-cols-[18rem_1fr]">
        <section aria-label="Iterations list" className="min-w-0 space-y-2">
          <h3 className="text-base font-semibold">Iterations</h3>
          {iterations.isPending ? <Skeleton className="h-24 w-full" /> : <IterationsList base={base} items={items} selected={shown} onSelect={setSelected} />}
        </section>
        <section aria-label="Iteration results" className="min-w-0 space-y-3 rounded-xl border border-zinc-200 bg-white p-4">
          <h3 className="text-base font-semibold">{shown ? `Iteration ${shown} results` : 'Iteration results'}</h3>
          {shownDetail ? <IterationDashboard iteration={shownDetail} previous={detailOf(shown - 1)} /> : <p className="text-sm text-zinc-600">Scores appear once the iteration is aggregated.</p>}
          {shownDetail?.aggregate && <IterationFacets projectId={projectId} experimentId={e.id} number={shownDetail.number} status={shownDetail.status} />}
          {shownDetail?.error && <Alert>{shownDetail.error}</Alert>}
        </section>
      </div>
      <section aria-label="Outputs" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-4">
        <h3 className="text-base font-semibold">Side-by-side outputs</h3>
        <SideBySide projectId={projectId} iterations={items} />
      </section>
    </div>
  );
}
