import { useState } from 'react';
import { Button } from '@/components/ui';
import type { Run } from '../api';
import { AddScorersDialog } from './AddScorersDialog';

/** The run page's "Add scorers" action (editors, once the run has finished). */
export function AddScorersAction({ projectId, run }: { projectId: number; run: Pick<Run, 'id' | 'scorers'> }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant="secondary" size="sm" onClick={() => setOpen(true)}>
        Add scorers
      </Button>
      <AddScorersDialog projectId={projectId} run={run} open={open} onClose={() => setOpen(false)} />
    </>
  );
}
