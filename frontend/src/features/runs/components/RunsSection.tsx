import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import {
  Pager,
  Alert,
  Button,
  buttonClasses,
  Card,
  CardContent,
  CardHeader,
  CardTitle,
  EmptyState,
  ErrorState,
  Label,
  LoadingRows,
  Progress,
  Select,
  Table,
  TBody,
  TD,
  TH,
  THead,
  TR,
} from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { roleAtLeast, type Role, type RunStatus } from '@/api/types';
import { absoluteTime, relativeTime } from '@/lib/format';
import { formatMicros } from '@/lib/money';
import { focusRing } from '@/lib/cn';
import { comparePath } from '@/features/compare/api';
import { useRuns, useStartDemoRun, RUNS_PAGE_SIZE } from '../hooks/useRuns';
import { RUN_STATUSES, RunStatusBadge, runStatusLabel } from './RunStatusBadge';

/** Cells sent (succeeded or failed) as a whole percentage, rounded down: skipped cells were never sent. */
export function donePercent(run: { total: number; succeeded: number; failed: number }): number {
  if (!run.total) return 0;
  const done = Math.min(run.total, run.succeeded + run.failed);
  return Math.floor((done / run.total) * 100);
}

function barTone(run: { status: RunStatus; failed: number; skipped?: number }): 'indigo' | 'success' | 'danger' | 'warning' {
  if (run.status === 'failed' || run.status === 'budget_exceeded' || run.failed > 0) return 'danger';
  if ((run.skipped ?? 0) > 0 || run.status === 'cancelled') return 'warning';
  return run.status === 'completed' ? 'success' : 'indigo';
}

export function RunsSection({ projectId, role }: { projectId: number; role: Role }) {
  const navigate = useNavigate();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<RunStatus | ''>('');
  const runs = useRuns(projectId, page, status);
  const demo = useStartDemoRun(projectId);
  const canRun = roleAtLeast(role, 'editor');
  const pageCount = Math.max(1, Math.ceil((runs.data?.total ?? 0) / (runs.data?.page_size ?? RUNS_PAGE_SIZE)));
  const newRunPath = `/projects/${projectId}/runs/new`;

  const startDemo = () =>
    demo.mutate(undefined, { onSuccess: (run) => navigate(`/projects/${projectId}/runs/${run.id}`) });

  return (
    <Card aria-labelledby="runs-heading">
      <CardHeader>
        <CardTitle id="runs-heading">Runs</CardTitle>
        <div className="flex flex-wrap items-center gap-2">
          <Label htmlFor="runs-status" className="sr-only">
            Filter by status
          </Label>
          <Select
            id="runs-status"
            controlSize="sm"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as RunStatus | '');
              setPage(1);
            }}
          >
            <option value="">All statuses</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {runStatusLabel[s]}
              </option>
            ))}
          </Select>
          {(runs.data?.total ?? 0) > 1 && (
            <Link to={comparePath(projectId)} className={buttonClasses('secondary', 'sm')}>
              Compare runs
            </Link>
          )}
          {canRun && (
            <>
              <Button variant="secondary" size="sm" onClick={startDemo} loading={demo.isPending}>
                Start demo run
              </Button>
              <Link to={newRunPath} className={buttonClasses('primary', 'sm')}>
                New run
              </Link>
            </>
          )}
        </div>
      </CardHeader>
      <CardContent className="space-y-3">
        {demo.isError && <Alert>Could not start the demo run: {errorMessage(demo.error)}</Alert>}
        {runs.isPending ? (
          <LoadingRows label="Loading runs" />
        ) : runs.isError ? (
          <ErrorState title="Could not load runs" error={runs.error} onRetry={() => runs.refetch()} retrying={runs.isFetching} />
        ) : runs.data.items.length === 0 ? (
          status ? (
            <EmptyState
              title={`No ${runStatusLabel[status].toLowerCase()} runs`}
              action={
                <Button variant="secondary" onClick={() => setStatus('')}>
                  Show all runs
                </Button>
              }
            />
          ) : (
            <EmptyState
              title="No runs yet"
              description={
                canRun
                  ? 'Configure a run of a dataset across your models, or start a demo run: it creates a small dataset and two fake models.'
                  : 'Runs started by editors of this project will appear here.'
              }
              action={
                canRun && (
                  <Link to={newRunPath} className={buttonClasses('primary')}>
                    New run
                  </Link>
                )
              }
            />
          )
        ) : (
          <>
            <Table aria-label="Runs" aria-busy={runs.isFetching}>
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Status</TH>
                  <TH className="w-56">Progress</TH>
                  <TH className="text-right">Cost</TH>
                  <TH>Created</TH>
                </TR>
              </THead>
              <TBody>
                {runs.data.items.map((run) => {
                  const pct = donePercent(run);
                  const name = run.name || `Run #${run.id}`;
                  return (
                    <TR key={run.id}>
                      <TD>
                        <Link
                          to={`/projects/${projectId}/runs/${run.id}`}
                          className={`rounded-xl font-medium text-indigo-600 hover:text-indigo-700 ${focusRing}`}
                        >
                          {name}
                        </Link>
                      </TD>
                      <TD>
                        <RunStatusBadge status={run.status} />
                      </TD>
                      <TD className="tabular-nums text-zinc-600">
                        <Progress value={pct} label={`Progress of ${name}`} className="mb-1 h-2" tone={barTone(run)} />
                        {run.succeeded + run.failed} / {run.total} ({pct}%)
                        {run.failed > 0 && <span className="text-red-700"> · {run.failed} failed</span>}
                        {(run.skipped ?? 0) > 0 && <span className="text-amber-800"> · {run.skipped} skipped</span>}
                      </TD>
                      <TD className="text-right tabular-nums text-zinc-700">
                        {formatMicros(run.spent_micros ?? 0)}
                        {run.budget_micros != null && <span className="text-zinc-500"> / {formatMicros(run.budget_micros)}</span>}
                      </TD>
                      <TD className="text-zinc-600">
                        <time dateTime={run.created_at} title={absoluteTime(run.created_at)}>
                          {relativeTime(run.created_at)}
                        </time>
                      </TD>
                    </TR>
                  );
                })}
              </TBody>
            </Table>
            {pageCount > 1 && <Pager label="Runs pagination" page={page} pageCount={pageCount} onPage={setPage} />}
          </>
        )}
      </CardContent>
    </Card>
  );
}
