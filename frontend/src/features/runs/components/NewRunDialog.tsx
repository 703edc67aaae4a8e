import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, Checkbox, describedBy, Dialog, ErrorState, Field, Input, Label, LoadingRows, Select } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { shortKindLabel } from '@/features/providers/kinds';
import { useCreateRun, useDatasets, useModels } from '../hooks/useRuns';
import { RunEstimate } from './RunEstimate';

const REPEATS_MAX = 10;

function parseRepeats(text: string): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text.trim());
  return n >= 1 && n <= REPEATS_MAX ? n : null;
}

/** Start a run of one dataset on one or more of the project's models. */
export function NewRunDialog({ projectId, open, onClose }: { projectId: number; open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const datasets = useDatasets(projectId, open);
  const models = useModels(projectId, open);
  const create = useCreateRun(projectId);
  const [datasetId, setDatasetId] = useState('');
  const [modelIds, setModelIds] = useState<number[]>([]);
  const [name, setName] = useState('');
  const [repeats, setRepeats] = useState('1');
  const [problem, setProblem] = useState<string | null>(null);

  function close() {
    setDatasetId('');
    setModelIds([]);
    setName('');
    setRepeats('1');
    setProblem(null);
    create.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!datasetId) return setProblem('Choose a dataset.');
    if (modelIds.length === 0) return setProblem('Choose at least one model.');
    const r = parseRepeats(repeats);
    if (r === null) return setProblem(`Repeats must be a whole number from 1 to ${REPEATS_MAX}.`);
    setProblem(null);
    create.mutate(
      { dataset_id: Number(datasetId), model_ids: modelIds, name: name.trim() || null, repeats: r },
      {
        onSuccess: (run) => {
          close();
          navigate(`/projects/${projectId}/runs/${run.id}`);
        },
      },
    );
  }

  const loading = datasets.isPending || models.isPending;
  const failed = datasets.isError ? datasets : models.isError ? models : null;
  const empty = !loading && !failed && (datasets.data?.items.length === 0 || models.data?.items.length === 0);

  return (
    <Dialog open={open} onClose={close} title="New run" description="Run every case of a dataset on the models you choose.">
      {loading ? (
        <LoadingRows label="Loading datasets and models" />
      ) : failed ? (
        <ErrorState error={failed.error} onRetry={() => failed.refetch()} />
      ) : empty ? (
        <p className="text-sm text-zinc-600">
          This project needs at least one dataset and one model. Start a demo run to create a demo dataset and two
          fake models.
        </p>
      ) : (
        <form noValidate onSubmit={onSubmit} className="space-y-4">
          {(problem || create.isError) && <Alert>{problem ?? errorMessage(create.error)}</Alert>}
          <Field id="run-name" label="Run name (optional)">
            <Input id="run-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} />
          </Field>
          <Field id="run-dataset" label="Dataset">
            <Select id="run-dataset" className="w-full" value={datasetId} onChange={(e) => setDatasetId(e.target.value)}>
              <option value="">Choose a dataset</option>
              {datasets.data?.items.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} (v{d.version}, {d.case_count} cases)
                </option>
              ))}
            </Select>
          </Field>
          <fieldset className="space-y-2">
            <legend className="text-sm font-medium">Models</legend>
            {models.data?.items.map((m) => (
              <div key={m.id} className="flex items-center gap-2">
                <Checkbox
                  id={`run-model-${m.id}`}
                  checked={modelIds.includes(m.id)}
                  onChange={(e) =>
                    setModelIds((ids) => (e.target.checked ? [...ids, m.id] : ids.filter((x) => x !== m.id)))
                  }
                />
                <Label htmlFor={`run-model-${m.id}`} className="font-normal">
                  {m.name}{' '}
                  <span className="text-zinc-500">
                    ({shortKindLabel(undefined, m.provider)} · {m.model})
                  </span>
                  {!m.priced && <span className="text-amber-800"> · unpriced</span>}
                </Label>
              </div>
            ))}
          </fieldset>
          <Field id="run-repeats" label="Repeats" hint={`Each case runs this many times per model (1 to ${REPEATS_MAX}).`}>
            <div className="w-24">
              <Input
                id="run-repeats"
                inputMode="numeric"
                value={repeats}
                onChange={(e) => setRepeats(e.target.value)}
                aria-describedby={describedBy('run-repeats', null, true)}
              />
            </div>
          </Field>
          <RunEstimate
            projectId={projectId}
            datasetId={datasetId ? Number(datasetId) : null}
            modelIds={modelIds}
            repeats={parseRepeats(repeats) ?? 1}
          />
          <div className="flex justify-end gap-2 pt-2">
            <Button variant="secondary" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Start run
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
