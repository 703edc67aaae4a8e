import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { Pager, Alert, Button, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { roleAtLeast, type Role } from '@/api/types';
import { absoluteTime, percentDone, relativeTime } from '@/lib/format';
import { focusRing } from '@/lib/cn';
import { useRuns, useStartDemoRun, RUNS_PAGE_SIZE } from '../hooks/useRuns';
import { NewRunDialog } from './NewRunDialog';
import { RunStatusBadge } from './RunStatusBadge';

export function RunsSection({ projectId, role }: { projectId: number; role: Role }) {
  const navigate = useNavigate();
  const [page, setPage] = useState(1);
  const [newRunOpen, setNewRunOpen] = useState(false);
  const runs = useRuns(projectId, page);
  const demo = useStartDemoRun(projectId);
  const canRun = roleAtLeast(role, 'editor');
  const pageCount = Math.max(1, Math.ceil((runs.data?.total ?? 0) / (runs.data?.page_size ?? RUNS_PAGE_SIZE)));

  const startDemo = () =>
    demo.mutate(undefined, { onSuccess: (run) => navigate(`/projects/${projectId}/runs/${run.id}`) });

  const demoButton = canRun && (
    <Button onClick={startDemo} loading={demo.isPending}>
      Start demo run
    </Button>
  );

  return (
    <Card aria-labelledby="runs-heading">
      <CardHeader>
        <CardTitle id="runs-heading">Runs</CardTitle>
        {canRun && (
          <div className="flex gap-2">
            <Button variant="secondary" onClick={() => setNewRunOpen(true)}>
              New run
            </Button>
            {demoButton}
          </div>
        )}
      </CardHeader>
      <CardContent className="space-y-3">
        {demo.isError && <Alert>Could not start the demo run: {errorMessage(demo.error)}</Alert>}
        {runs.isPending ? (
          <LoadingRows label="Loading runs" />
        ) : runs.isError ? (
          <ErrorState title="Could not load runs" error={runs.error} onRetry={() => runs.refetch()} retrying={runs.isFetching} />
        ) : runs.data.items.length === 0 ? (
          <EmptyState
            title="No runs yet"
            description={
              canRun
                ? 'A demo run creates a small dataset and two fake models, then runs every case on both.'
                : 'Runs started by editors of this project will appear here.'
            }
          />
        ) : (
          <>
            <Table aria-label="Runs">
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Status</TH>
                  <TH>Progress</TH>
                  <TH>Created</TH>
                </TR>
              </THead>
              <TBody>
                {runs.data.items.map((run) => (
                  <TR key={run.id}>
                    <TD>
                      <Link
                        to={`/projects/${projectId}/runs/${run.id}`}
                        className={`rounded-xl font-medium text-indigo-600 hover:text-indigo-700 ${focusRing}`}
                      >
                        {run.name || `Run #${run.id}`}
                      </Link>
                    </TD>
                    <TD>
                      <RunStatusBadge status={run.status} />
                    </TD>
                    <TD className="tabular-nums text-zinc-600">
                      {run.succeeded + run.failed} / {run.total} ({percentDone(run.total, run.succeeded, run.failed)}%)
                      {run.failed > 0 && <span className="text-red-700"> · {run.failed} failed</span>}
                    </TD>
                    <TD className="text-zinc-600">
                      <time dateTime={run.created_at} title={absoluteTime(run.created_at)}>
                        {relativeTime(run.created_at)}
                      </time>
                    </TD>
                  </TR>
                ))}
              </TBody>
            </Table>
            {pageCount > 1 && (
              <Pager label="Runs pagination" page={page} pageCount={pageCount} onPage={setPage} />
            )}
          </>
        )}
      </CardContent>
      {canRun && <NewRunDialog projectId={projectId} open={newRunOpen} onClose={() => setNewRunOpen(false)} />}
    </Card>
  );
}
