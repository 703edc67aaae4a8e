import { useState } from 'react';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, ErrorState, LoadingRows, Progress } from '@/components/ui';
import type { Run } from '../api';
import { useComparisonSummary, type ComparisonStarted, type ComparisonSummary } from './api';
import { PairwiseDialog } from './PairwiseDialog';
import { PairwiseResults } from './PairwiseResults';

export const PAIRWISE_POLL_MS = 2000;

/** Judgements of the started job so far, and how many it will make (pairs × judges, both sides). */
export function jobProgress(job: ComparisonStarted, summary: ComparisonSummary | undefined): { done: number; expected: number } {
  const expected = (job.pairs + job.already_compared) * job.judges.length;
  const ids = [job.target_a_id, job.target_b_id];
  const done = (summary?.pairs ?? [])
    .filter((p) => p.scorer_version_id === job.scorer_version_id && ids.includes(p.target_a_id) && ids.includes(p.target_b_id))
    .reduce((sum, p) => sum + p.comparisons, 0);
  return { done: Math.min(done, expected), expected };
}

/**
 * The run's pairwise judging: Bradley–Terry ratings with intervals, position bias, and a dialog to start more.
 * With `baseRun`, the run's targets judged against the base run's (the compare-runs page).
 */
export function PairwiseSection({
  projectId,
  run,
  baseRun,
  canEdit,
}: {
  projectId: number;
  run: Pick<Run, 'id' | 'targets'>;
  baseRun?: Pick<Run, 'id' | 'targets'>;
  canEdit: boolean;
}) {
  const [open, setOpen] = useState(false);
  const [job, setJob] = useState<ComparisonStarted | null>(null);
  const running = (data: ComparisonSummary | undefined) => {
    if (!job?.enqueued) return false;
    const { done, expected } = jobProgress(job, data);
    return done < expected;
  };
  const summary = useComparisonSummary(projectId, run.id, PAIRWISE_POLL_MS, running, baseRun?.id ?? null);
  const progress = job ? jobProgress(job, summary.data) : null;
  const twoTargets = baseRun ? (run.targets ?? []).length > 0 && (baseRun.targets ?? []).length > 0 : (run.targets ?? []).length >= 2;

  return (
    <Card>
      <CardHeader>
        <div className="flex flex-wrap items-center justify-between gap-2">
          <CardTitle>Pairwise judging</CardTitle>
          {canEdit && twoTargets && (
            <Button variant="secondary" size="sm" onClick={() => setOpen(true)}>
              {baseRun ? 'Judge pairwise' : 'Compare two targets'}
            </Button>
          )}
        </div>
      </CardHeader>
      <CardContent className="space-y-4">
        {job && progress && (
          <div className="space-y-1" data-testid="pairwise-progress" aria-live="polite">
            {job.enqueued ? (
              <>
                <Progress value={progress.expected ? (100 * progress.done) / progress.expected : 100} label="Pairs judged" />
                <p className="text-sm text-zinc-700">
                  {progress.done.toLocaleString('en-US')} of {progress.expected.toLocaleString('en-US')} judgements
                  {progress.done >= progress.expected ? ' · done' : ''}
                </p>
              </>
            ) : (
              <Alert tone="info">Nothing left to compare: every pair of these targets' outputs was already judged by this version.</Alert>
            )}
          </div>
        )}
        {summary.isPending ? (
          <LoadingRows label="Loading comparisons" />
        ) : summary.isError ? (
          <ErrorState title="Could not load the comparisons" error={summary.error} onRetry={() => summary.refetch()} />
        ) : summary.data.pairs.length === 0 ? (
          <p className="text-sm text-zinc-600">
            {baseRun
              ? 'No pairwise judgements of these two runs yet: judge a target of each on the cases they share to rate them against each other.'
              : twoTargets
                ? 'No pairwise comparisons yet: compare two targets to rate them against each other.'
                : 'Pairwise judging compares two targets; this run has one.'}
          </p>
        ) : (
          <PairwiseResults summary={summary.data} />
        )}
      </CardContent>
      <PairwiseDialog
        projectId={projectId}
        run={run}
        baseRun={baseRun}
        open={open}
        onClose={() => setOpen(false)}
        onStarted={setJob}
      />
    </Card>
  );
}
