import { useMemo, useState } from 'react';
import { Alert, Button, Dialog, Progress, Spinner } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import type { EventSourceCtor } from '@/api/useEventStream';
import type { Run } from '../api';
import { useActiveScorers, useAttachEstimate, useAttachScorers, type ScorerPick } from './api';
import { AttachEstimateView } from './AttachEstimateView';
import { pickedVersion, ScorerPicker } from './ScorerPicker';
import { useScoringStream } from './useScoringStream';

/**
 * Scores a finished run with more scorers (or a newer version of one it has): pick, see
 * the estimate and the budget left, add; then the job's progress, live from the run's stream.
 */
export function AddScorersDialog({
  projectId,
  run,
  open,
  onClose,
  EventSourceImpl,
}: {
  projectId: number;
  run: Pick<Run, 'id' | 'scorers'>;
  open: boolean;
  onClose: () => void;
  EventSourceImpl?: EventSourceCtor;
}) {
  const [picks, setPicks] = useState<ScorerPick[]>([]);
  const [after, setAfter] = useState<string | null>(null);
  const [expected, setExpected] = useState(0);
  const scorers = useActiveScorers(projectId);
  const pinned = useMemo(() => (run.scorers ?? []).map((s) => s.scorer_version_id), [run.scorers]);
  const versionIds = useMemo(
    () => picks.map((p) => pickedVersion(p, scorers.data?.items ?? [])).filter((v): v is number => v !== null),
    [picks, scorers.data],
  );
  const clash = versionIds.some((v) => pinned.includes(v));
  const estimate = useAttachEstimate(projectId, run.id, open && !clash && after === null ? versionIds : []);
  const attach = useAttachScorers(projectId, run.id);
  const progress = useScoringStream(projectId, run.id, after, EventSourceImpl);

  function close() {
    setPicks([]);
    setAfter(null);
    attach.reset();
    onClose();
  }
  function add() {
    const scores = estimate.data?.scores ?? 0;
    attach.mutate(versionIds, {
      onSuccess: (started) => {
        setExpected(scores);
        setAfter(started.events_after);
      },
    });
  }

  const following = after !== null;
  const finished = progress.state === 'finished';
  const estimateErrors = estimate.isError ? Object.values(fieldErrors(estimate.error)) : [];
  return (
    <Dialog
      open={open}
      onClose={close}
      size="wide"
      title={following ? 'Scoring the run' : 'Add scorers to this run'}
      description={
        following
          ? 'The scores of the scorers the run had are kept; the new ones are added beside them.'
          : 'Score the recorded outputs with more scorers, or with a newer version of one the run has (both versions keep their scores).'
      }
      footer={
        following ? (
          <Button variant={finished ? 'primary' : 'secondary'} onClick={close}>
            {finished ? 'Done' : 'Close (scoring goes on)'}
          </Button>
        ) : (
          <>
            <Button variant="secondary" onClick={close}>
              Cancel
            </Button>
            <Button onClick={add} loading={attach.isPending} disabled={versionIds.length === 0 || clash || !estimate.isSuccess || estimate.isPlaceholderData}>
              Add and score
            </Button>
          </>
        )
      }
    >
      {following ? (
        <div className="space-y-3" data-testid="scoring-progress" aria-live="polite">
          <Progress value={expected > 0 ? (100 * progress.scores) / expected : finished ? 100 : 0} label="Scores written" />
          <p className="text-sm text-zinc-700">
            {!finished && progress.state !== 'lost' && <Spinner className="mr-2 inline-block" />}
            <span data-testid="scoring-count">
              {progress.scores.toLocaleString('en-US')} of {expected.toLocaleString('en-US')} scores written
            </span>
            {finished && !progress.stopped && ' · done'}
          </p>
          {progress.stopped === 'budget_exceeded' && (
            <Alert>Scoring stopped: the budget has no room for the judges of the next outputs. Raise the cap and add the scorer again.</Alert>
          )}
          {progress.state === 'lost' && (
            <Alert tone="info">The live progress was lost; the scores keep landing. Reload the page to see them.</Alert>
          )}
        </div>
      ) : (
        <div className="space-y-4">
          <ScorerPicker projectId={projectId} value={picks} onChange={setPicks} pinned={pinned} idPrefix="add-scorer" />
          {estimate.isFetching && !estimate.data && <Spinner />}
          {estimate.data && versionIds.length > 0 && !clash && <AttachEstimateView estimate={estimate.data} />}
          {estimate.isError && (
            <Alert>
              {errorMessage(estimate.error)}
              {estimateErrors.length > 0 && ` ${estimateErrors.join(' ')}`}
            </Alert>
          )}
          {attach.isError && <Alert>{errorMessage(attach.error)}</Alert>}
        </div>
      )}
    </Dialog>
  );
}
