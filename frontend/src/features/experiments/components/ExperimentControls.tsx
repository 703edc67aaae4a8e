import { useState } from 'react';
import { Alert, Button, Dialog } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import type { Experiment } from '../api';
import { useExperimentControl, type ControlAction } from '../hooks/useExperiments';

/** Pause, resume, cancel (confirmed); the server answers 409 for a transition it does not allow. */
export function ExperimentControls({ projectId, experiment, paused }: { projectId: number; experiment: Experiment; paused: boolean }) {
  const control = useExperimentControl(projectId, experiment.id);
  const [confirm, setConfirm] = useState(false);
  const live = experiment.status === 'running' || experiment.status === 'paused';
  if (!live) return null;
  const run = (a: ControlAction, after?: () => void) => control.mutate(a, { onSuccess: () => after?.() });
  const busy = (a: ControlAction) => control.isPending && control.variables === a;
  const isPaused = experiment.status === 'paused' || paused;
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap gap-2">
        {isPaused ? (
          <Button onClick={() => run('resume')} loading={busy('resume')}>
            Resume
          </Button>
        ) : (
          <Button variant="secondary" onClick={() => run('pause')} loading={busy('pause')}>
            Pause
          </Button>
        )}
        <Button variant="danger" onClick={() => setConfirm(true)}>
          Cancel experiment
        </Button>
      </div>
      {control.isError && !confirm && <Alert>{errorMessage(control.error)}</Alert>}
      <Dialog
        open={confirm}
        onClose={() => setConfirm(false)}
        title="Cancel this experiment?"
        description="Finished iterations and prompt versions are kept; the current iteration stops and the loop ends."
        footer={
          <>
            <Button variant="secondary" onClick={() => setConfirm(false)} data-autofocus>
              Keep running
            </Button>
            <Button variant="danger" loading={busy('cancel')} onClick={() => run('cancel', () => setConfirm(false))}>
              Cancel experiment
            </Button>
          </>
        }
      >
        {control.isError && <Alert>{errorMessage(control.error)}</Alert>}
      </Dialog>
    </div>
  );
}
