import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { buttonClasses, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { isTerminal } from '@/api/types';
import { useEventStream } from '@/api/useEventStream';
import { useProject } from '@/features/projects/hooks/useProjects';
import { OutputsTable } from '../components/OutputsTable';
import { RunProgress } from '../components/RunProgress';
import { useRun } from '../hooks/useRuns';

const FALLBACK_POLL_MS = 3000;

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
  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-500">
        <Link to="/projects" className="rounded-xl hover:text-zinc-900">
          Projects
        </Link>{' '}
        /{' '}
        <Link to={`/projects/${projectId}`} className="rounded-xl hover:text-zinc-900">
          {project.data?.name ?? 'Project'}
        </Link>{' '}
        / <span className="text-zinc-900">{r.name || `Run #${r.id}`}</span>
      </nav>
      <h1 className="text-xl font-semibold">{r.name || `Run #${r.id}`}</h1>
      <RunProgress run={r} stream={live.stream.state} />
      <section aria-labelledby="outputs-heading" className="space-y-3">
        <h2 id="outputs-heading" className="text-xl font-semibold">
          Outputs
        </h2>
        <OutputsTable projectId={projectId} runId={runId} />
      </section>
    </div>
  );
}

/**
 * The run, kept live by its event stream. Only if the stream cannot be used
 * (the browser gave up, or has no EventSource) does the page poll instead.
 */
function useLiveRun(projectId: number, runId: number) {
  const queryClient = useQueryClient();
  const [streamDown, setStreamDown] = useState(false);
  const run = useRun(projectId, runId, { pollMs: streamDown ? FALLBACK_POLL_MS : false });
  const enabled = run.isSuccess && !isTerminal(run.data.status);
  const stream = useEventStream(projectId, runId, { enabled });
  useEffect(() => setStreamDown(stream.state === 'error' || stream.state === 'unsupported'), [stream.state]);

  const done = run.data ? run.data.succeeded + run.data.failed : 0;
  const status = run.data?.status;
  useEffect(() => {
    if (streamDown) void queryClient.invalidateQueries({ queryKey: qk.outputsAll(projectId, runId) });
  }, [streamDown, done, status, queryClient, projectId, runId]);
  return { run, stream };
}
