import { useState, type FormEvent } from 'react';
import { Alert, Button, Dialog, Field, Input, describedBy } from '@/components/ui';
import { useQueryClient } from '@tanstack/react-query';
import { errorMessage, isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { formatMicros, parseDollars } from '@/lib/money';
import type { Progress, RunAction, RunStatus } from '../api';
import { useRaiseBudget, useRunAction } from '../hooks/useRuns';
import { percentOf } from '../live';

const RETRYABLE: RunStatus[] = ['partial', 'failed', 'budget_exceeded'];

/** Pause, resume and cancel (with a confirmation); the server answers 409 when a transition is not allowed. */
export function RunControls({ projectId, runId, progress, version }: { projectId: number; runId: number; progress: Progress; version?: number }) {
  const action = useRunAction(projectId, runId);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const status = progress.status;
  const run = (a: RunAction, after?: () => void) => action.mutate(a, { onSuccess: () => after?.() });
  const busy = (a: RunAction) => action.isPending && action.variables === a;

  return (
    <div className="space-y-2">
      <div className="flex flex-wrap justify-end gap-2">
        {status === 'running' && (
          <Button variant="secondary" onClick={() => run('pause')} loading={busy('pause')}>
            Pause
          </Button>
        )}
        {status === 'paused' && (
          <Button onClick={() => run('resume')} loading={busy('resume')}>
            Resume
          </Button>
        )}
        {(status === 'pending' || status === 'running' || status === 'paused') && (
          <Button variant="danger" onClick={() => setConfirmCancel(true)}>
            Cancel run
          </Button>
        )}
      </div>
      {action.isError && !confirmCancel && <Alert>{errorMessage(action.error)}</Alert>}
      {status === 'budget_exceeded' && <RaiseBudget projectId={projectId} runId={runId} progress={progress} version={version} />}
      <Dialog
        open={confirmCancel}
        onClose={() => setConfirmCancel(false)}
        title="Cancel this run?"
        description="Cells already answered are kept; the rest are skipped."
        footer={
          <>
            <Button variant="secondary" onClick={() => setConfirmCancel(false)} data-autofocus>
              Keep running
            </Button>
            <Button variant="danger" loading={busy('cancel')} onClick={() => run('cancel', () => setConfirmCancel(false))}>
              Cancel run
            </Button>
          </>
        }
      >
        <dl className="grid grid-cols-2 gap-3 text-sm" data-testid="cancel-summary">
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-zinc-600">Progress so far</dt>
            <dd className="text-base font-semibold tabular-nums">
              {progress.done} of {progress.total} cells ({percentOf(progress.done, progress.total)}%)
            </dd>
          </div>
          <div className="rounded-xl border border-zinc-200 p-3">
            <dt className="text-zinc-600">Cost spent</dt>
            <dd className="text-base font-semibold tabular-nums">{formatMicros(progress.spent_micros)}</dd>
          </div>
        </dl>
        <p className="mt-4 text-sm font-medium text-red-800">This cannot be undone: a cancelled run cannot be resumed.</p>
        {action.isError && confirmCancel && <Alert className="mt-3">{errorMessage(action.error)}</Alert>}
      </Dialog>
    </div>
  );
}

/** A run stopped for budget goes on with a larger cap (empty: no cap): PATCH (based on the run's version), then resume. */
function RaiseBudget({ projectId, runId, progress, version }: { projectId: number; runId: number; progress: Progress; version?: number }) {
  const raise = useRaiseBudget(projectId, runId);
  const queryClient = useQueryClient();
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const stale = isStaleWrite(raise.error) ? raise.error : null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDollars(text);
    if (!parsed.ok) return setError(parsed.error);
    if (parsed.micros !== null && parsed.micros <= progress.spent_micros + progress.reserved_micros) {
      return setError(`Enter more than the ${formatMicros(progress.spent_micros)} already spent.`);
    }
    setError(null);
    raise.mutate({ budgetMicros: parsed.micros, version });
  };
  const asked = raise.variables?.budgetMicros;
  return (
    <form onSubmit={submit} className="flex flex-wrap items-end justify-end gap-2" aria-label="Raise the budget">
      <Field id="raise-budget" label="New budget ($, empty for none)" error={error}>
        <Input
          id="raise-budget"
          inputMode="decimal"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy('raise-budget', error)}
        />
      </Field>
      <Button type="submit" loading={raise.isPending}>
        Raise budget and resume
      </Button>
      <StaleWriteNotice
        className="w-full"
        error={raise.error}
        edit={`Budget: ${asked === null || asked === undefined ? 'none' : formatMicros(asked)}`}
        onReload={() => {
          raise.reset();
          void queryClient.invalidateQueries({ queryKey: qk.run(projectId, runId) });
          void queryClient.invalidateQueries({ queryKey: qk.progress(projectId, runId) });
        }}
        onKeepMine={stale && raise.variables ? () => raise.mutate({ budgetMicros: raise.variables.budgetMicros, version: stale.currentVersion }) : undefined}
        keeping={raise.isPending}
      />
      {raise.isError && !stale && <Alert className="w-full">{errorMessage(raise.error)}</Alert>}
    </form>
  );
}

export function canRetry(p: Progress): boolean {
  return RETRYABLE.includes(p.status) && (p.failed > 0 || (p.status === 'budget_exceeded' && p.skipped > 0));
}
