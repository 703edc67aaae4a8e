import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, Checkbox, describedBy, Dialog, Field, Label, LoadingRows, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { CRITERIA, judgmentsPath, MAX_INSTRUCTION, MAX_JUDGES, type Criterion } from '../api';
import { useStartJudging } from '../hooks/useJudgments';

interface Problems {
  judges?: string;
  criteria?: string;
  instruction?: string;
}

function check(judges: number[], criteria: Criterion[], instruction: string): Problems {
  const problems: Problems = {};
  if (judges.length === 0) problems.judges = 'Choose at least one judge model.';
  else if (judges.length > MAX_JUDGES) problems.judges = `Choose at most ${MAX_JUDGES} judge models.`;
  if (criteria.length === 0 && !instruction.trim()) problems.criteria = 'Tick at least one criterion, or write an instruction.';
  if (instruction.length > MAX_INSTRUCTION) problems.instruction = `At most ${MAX_INSTRUCTION.toLocaleString('en-US')} characters.`;
  return problems;
}

/** The first server message under a field (its items' included: "judges.1" counts for judges). */
function serverProblem(errors: Record<string, string>, field: string): string | undefined {
  return Object.entries(errors).find(([k]) => k === field || k.startsWith(`${field}.`))?.[1];
}

/** Judge mode's configuration (myarena §3.6): judge models, predefined criteria and/or a free-form instruction. */
export function JudgeConfigDialog({
  projectId,
  datasetId,
  datasetName,
  open,
  onClose,
}: {
  projectId: number;
  datasetId: number;
  datasetName: string;
  open: boolean;
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const models = useModelConfigs(projectId, false);
  const start = useStartJudging(projectId, datasetId);
  const [judges, setJudges] = useState<number[]>([]);
  const [criteria, setCriteria] = useState<Criterion[]>(['clarity', 'difficulty', 'relevance', 'originality', 'overall']);
  const [instruction, setInstruction] = useState('');
  const [problems, setProblems] = useState<Problems>({});

  const server = fieldErrors(start.error);
  const judgesError = problems.judges ?? serverProblem(server, 'judges');
  const criteriaError = problems.criteria ?? serverProblem(server, 'criteria');
  const instructionError = problems.instruction ?? serverProblem(server, 'instruction');
  const datasetError = serverProblem(server, 'dataset_id') ?? serverProblem(server, 'dataset_version_id');
  const otherError = start.isError && !judgesError && !criteriaError && !instructionError && !datasetError ? errorMessage(start.error) : null;
  const available = (models.data?.items ?? []).filter((m) => !m.archived_at);

  function close() {
    setProblems({});
    start.reset();
    onClose();
  }

  function toggle<T>(list: T[], item: T, on: boolean): T[] {
    return on ? [...list.filter((x) => x !== item), item] : list.filter((x) => x !== item);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const found = check(judges, criteria, instruction);
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    const ordered = CRITERIA.map((c) => c.key).filter((k) => criteria.includes(k));
    start.mutate(
      { judges, criteria: ordered, instruction: instruction.trim() || null },
      {
        onSuccess: (run) => {
          close();
          navigate(judgmentsPath(projectId, datasetId, run.id));
        },
      },
    );
  }

  return (
    <Dialog
      open={open}
      onClose={close}
      size="wide"
      title="Judge questions"
      description={`Judge models rate every question of “${datasetName}” from 1 to 10 on each criterion, with a justification.`}
    >
      <form onSubmit={submit} noValidate className="space-y-5">
        <fieldset className="space-y-2" aria-describedby={judgesError ? 'judge-models-error' : 'judge-models-hint'}>
          <legend className="text-sm font-medium">Judge models</legend>
          <p id="judge-models-hint" className="text-sm text-zinc-500">
            Up to {MAX_JUDGES}. With two or more, you see how far they agree.
          </p>
          {models.isPending ? (
            <LoadingRows label="Loading models" rows={2} />
          ) : models.isError ? (
            <Alert>Could not load the models: {errorMessage(models.error)}</Alert>
          ) : available.length === 0 ? (
            <p className="text-sm text-zinc-600">This project has no models yet: add one under Models first.</p>
          ) : (
            <div className="grid gap-2 sm:grid-cols-2">
              {available.map((m) => (
                <div key={m.id} className="flex items-center gap-2">
                  <Checkbox
                    id={`judge-model-${m.id}`}
                    checked={judges.includes(m.id)}
                    onChange={(e) => setJudges((js) => toggle(js, m.id, e.target.checked))}
                  />
                  <Label htmlFor={`judge-model-${m.id}`} className="font-normal">
                    {m.name} <span className="text-zinc-500">({m.model})</span>
                  </Label>
                </div>
              ))}
            </div>
          )}
          {judgesError && (
            <p id="judge-models-error" className="text-sm text-red-700" role="alert">
              {judgesError}
            </p>
          )}
        </fieldset>

        <fieldset className="space-y-2" aria-describedby={criteriaError ? 'judge-criteria-error' : undefined}>
          <legend className="text-sm font-medium">Criteria (each rated 1–10)</legend>
          <div className="space-y-2">
            {CRITERIA.map((c) => (
              <div key={c.key} className="flex items-start gap-2">
                <Checkbox
                  id={`judge-criterion-${c.key}`}
                  className="mt-0.5"
                  checked={criteria.includes(c.key)}
                  aria-describedby={`judge-criterion-${c.key}-hint`}
                  onChange={(e) => setCriteria((cs) => toggle(cs, c.key, e.target.checked))}
                />
                <div>
                  <Label htmlFor={`judge-criterion-${c.key}`} className="font-normal">
                    {c.label}
                  </Label>
                  <p id={`judge-criterion-${c.key}-hint`} className="text-sm text-zinc-500">
                    {c.hint}
                  </p>
                </div>
              </div>
            ))}
          </div>
          {criteriaError && (
            <p id="judge-criteria-error" className="text-sm text-red-700" role="alert">
              {criteriaError}
            </p>
          )}
        </fieldset>

        <Field
          id="judge-instruction"
          label="Instruction (optional)"
          error={instructionError}
          hint="Free-form guidance, e.g. “Rate the quality of this question from 1-10 and explain why.” With no criterion ticked, the judges give one overall rating as it asks."
        >
          <Textarea
            id="judge-instruction"
            value={instruction}
            invalid={!!instructionError}
            aria-describedby={describedBy('judge-instruction', instructionError, true)}
            onChange={(e) => setInstruction(e.target.value)}
          />
        </Field>

        {datasetError && <Alert>{datasetError}</Alert>}
        {otherError && <Alert>{otherError}</Alert>}
        <div className="flex justify-end gap-2">
          <Button type="button" variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={start.isPending}>
            Start judging
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
