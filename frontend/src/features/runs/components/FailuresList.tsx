import { useState } from 'react';
import { Alert, Button, EmptyState, ErrorState, LoadingRows, Pager } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { skippedWhy } from '@/lib/rates';
import type { Progress } from '../api';
import { FAILURES_PAGE_SIZE, useOutputs, useRunAction, useSummary } from '../hooks/useRuns';
import { ScoringOutcomes, scoringProblems } from './ScoringOutcomes';
import { canRetry } from './RunControls';

/** Failed cells with their class and message, a page at a time, and "Retry failed cells". */
export function FailuresList({ projectId, runId, progress, canEdit }: { projectId: number; runId: number; progress: Progress; canEdit: boolean }) {
  const [page, setPage] = useState(1);
  const failures = useOutputs(projectId, runId, page, { status: 'failed' }, FAILURES_PAGE_SIZE);
  const retry = useRunAction(projectId, runId);
  const classes = Object.entries(progress.errors ?? {}).filter(([, n]) => n > 0);
  const scoring = useSummary(projectId, runId).data?.scoring ?? [];
  const scoringBad = scoringProblems(scoring);

  return (
    <div className="space-y-3">
      {classes.length > 0 && (
        <div>
          <h3 className="text-sm font-medium text-zinc-900">Call errors by class</h3>
          <ul className="mt-1 flex flex-wrap gap-2" aria-label="Errors by class">
            {classes.map(([cls, n]) => (
              <li key={cls} className="rounded-xl border border-red-200 bg-red-50 px-2 py-0.5 text-sm text-red-800">
                {cls}: <span className="font-semibold tabular-nums">{n}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <ScoringOutcomes scoring={scoring} />
      {canEdit && canRetry(progress) && (
        <div className="flex items-center gap-3">
          <Button onClick={() => retry.mutate('retry-failed')} loading={retry.isPending}>
            Retry failed cells
          </Button>
          <span className="text-sm text-zinc-600">Runs the failed cells again; succeeded cells are kept.</span>
        </div>
      )}
      {retry.isError && <Alert>{errorMessage(retry.error)}</Alert>}
      {failures.isPending ? (
        <LoadingRows label="Loading failures" rows={2} />
      ) : failures.isError ? (
        <ErrorState title="Could not load failures" error={failures.error} onRetry={() => failures.refetch()} />
      ) : failures.data.items.length === 0 ? (
        progress.skipped > 0 ? (
          <p className="text-sm text-amber-800" data-testid="no-call-failures">
            No call failed; {progress.skipped.toLocaleString('en-US')} {progress.skipped === 1 ? 'cell was' : 'cells were'} never sent
            {skippedWhy(progress.status) ? ` (${skippedWhy(progress.status)})` : ''}
            {scoringBad > 0 && `; ${scoringBad} ${scoringBad === 1 ? 'score' : 'scores'} failed or could not be given (above)`}.
          </p>
        ) : scoringBad > 0 ? (
          <p className="text-sm text-zinc-600" data-testid="no-call-failures">
            No call failed; {scoringBad} {scoringBad === 1 ? 'score' : 'scores'} failed or could not be given (above).
          </p>
        ) : (
          <EmptyState title="No failures" description="Failed cells and failed or errored scores appear here." />
        )
      ) : (
        <>
          <ul className="divide-y divide-zinc-200 rounded-xl border border-zinc-200" aria-label="Failed cells">
            {failures.data.items.map((o) => (
              <li key={o.id} className="space-y-1 p-3 text-sm">
                <p className="text-zinc-600">
                  Case #{o.case_number ?? o.case_id} · {o.label}
                  {o.repeat > 0 && ` · repeat ${o.repeat + 1}`}
                  {o.turn > 0 && ` · turn ${o.turn + 1}`}
                  {o.attempts > 1 && ` · ${o.attempts} attempts`}
                </p>
                <p className="break-words text-red-800">
                  <span className="font-medium">{o.error_class ?? 'error'}</span>
                  {o.error ? `: ${o.error}` : ''}
                </p>
              </li>
            ))}
          </ul>
          {failures.data.total > FAILURES_PAGE_SIZE && (
            <Pager
              label="Failures pagination"
              page={page}
              pageCount={Math.ceil(failures.data.total / FAILURES_PAGE_SIZE)}
              onPage={setPage}
              summary={`${failures.data.total} failed cells · page ${page} of ${Math.ceil(failures.data.total / FAILURES_PAGE_SIZE)}`}
            />
          )}
        </>
      )}
    </div>
  );
}
