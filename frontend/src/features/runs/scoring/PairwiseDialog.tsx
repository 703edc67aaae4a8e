import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Alert, Button, buttonClasses, Dialog, EmptyState, Field, LoadingRows, Select } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import type { Run } from '../api';
import { PAIR_KINDS, scorersUrl, useActiveScorers, useStartComparisons, type ComparisonStarted } from './api';

/**
 * Starts pairwise judging with a pairwise-judge scorer: two targets of the run, or (with `baseRun`) a target of
 * the run against a target of the base run, on the cases both ran.
 */
export function PairwiseDialog({
  projectId,
  run,
  baseRun,
  open,
  onClose,
  onStarted,
}: {
  projectId: number;
  run: Pick<Run, 'id' | 'targets'>;
  baseRun?: Pick<Run, 'id' | 'targets'>;
  open: boolean;
  onClose: () => void;
  onStarted: (started: ComparisonStarted) => void;
}) {
  const targets = run.targets ?? [];
  const bTargets = baseRun ? (baseRun.targets ?? []) : targets;
  const scorers = useActiveScorers(projectId);
  const judges = (scorers.data?.items ?? []).filter((s) => PAIR_KINDS.includes(s.kind));
  const [scorerId, setScorerId] = useState<number | null>(null);
  const [a, setA] = useState<number | null>(targets[0]?.id ?? null);
  const [b, setB] = useState<number | null>(bTargets[baseRun ? 0 : 1]?.id ?? null);
  const start = useStartComparisons(projectId, run.id);
  const chosen = scorerId ?? judges[0]?.id ?? null;
  const same = !baseRun && a !== null && a === b;
  const errors = start.isError ? fieldErrors(start.error) : {};
  const enough = baseRun ? targets.length > 0 && bTargets.length > 0 : targets.length >= 2;

  function close() {
    start.reset();
    onClose();
  }
  function submit() {
    if (chosen === null || a === null || b === null || same) return;
    const other = baseRun ? { base_run_id: baseRun.id, base_target_id: b } : { target_b_id: b };
    start.mutate({ scorer_id: chosen, target_a_id: a, ...other }, { onSuccess: (s) => { onStarted(s); close(); } });
  }

  let body;
  if (scorers.isPending) body = <LoadingRows label="Loading scorers" />;
  else if (scorers.isError) body = <Alert>Could not load the scorers: {errorMessage(scorers.error)}</Alert>;
  else if (judges.length === 0) {
    body = (
      <EmptyState
        title="No pairwise judge yet"
        description="Pairwise judging needs a scorer of kind pairwise_judge: it shows a judge model both replies and asks which is better."
        action={
          <Link to={scorersUrl(projectId)} className={buttonClasses('secondary')}>
            Go to scorers
          </Link>
        }
      />
    );
  } else {
    const targetSelect = (id: string, label: string, value: number | null, set: (v: number) => void) => (
      <Field id={id} label={label} error={errors[id === 'pair-a' ? 'target_a_id' : baseRun ? 'base_target_id' : 'target_b_id'] ?? null}>
        <Select id={id} className="w-full" value={value ?? ''} onChange={(e) => set(Number(e.target.value))}>
          {(id === 'pair-a' ? targets : bTargets).map((t) => (
            <option key={t.id} value={t.id}>
              {t.label}
            </option>
          ))}
        </Select>
      </Field>
    );
    body = (
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="pair-judge" label="Pairwise judge" error={errors.scorer_id ?? null}>
          <Select id="pair-judge" className="w-full" value={chosen ?? ''} onChange={(e) => setScorerId(Number(e.target.value))}>
            {judges.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} (v{s.latest.number})
              </option>
            ))}
          </Select>
        </Field>
        <div />
        {targetSelect('pair-a', baseRun ? 'Target of the head run (A)' : 'Target A', a, setA)}
        {targetSelect('pair-b', baseRun ? 'Target of the base run (B)' : 'Target B', b, setB)}
        {same && <p className="text-sm text-red-700 sm:col-span-2">Pick two different targets.</p>}
        {start.isError && (
          <Alert className="sm:col-span-2">{errors.base_run_id ?? errors._schema ?? errorMessage(start.error)}</Alert>
        )}
      </div>
    );
  }
  return (
    <Dialog
      open={open}
      onClose={close}
      size="wide"
      title={baseRun ? 'Judge the two runs pairwise' : 'Compare two targets'}
      description={`Each ${baseRun ? 'shared ' : ''}case's two replies are judged in both orders (A first, then B first), so a judge that favours a position shows as position bias.`}
      footer={
        <>
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button onClick={submit} loading={start.isPending} disabled={chosen === null || same || !enough}>
            Start judging
          </Button>
        </>
      }
    >
      {body}
    </Dialog>
  );
}
