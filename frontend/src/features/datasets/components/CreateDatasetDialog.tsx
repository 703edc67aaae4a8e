import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, describedBy, Dialog, Field, Input, Select, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { DATASET_KINDS, KIND_LABELS, type DatasetKind } from '../api';
import { useCreateDataset } from '../hooks/useDatasets';

/** A new, empty dataset; opens its page once created. */
export function CreateDatasetDialog({ projectId, open, onClose }: { projectId: number; open: boolean; onClose: () => void }) {
  const navigate = useNavigate();
  const create = useCreateDataset(projectId);
  const [name, setName] = useState('');
  const [kind, setKind] = useState<DatasetKind>('questions');
  const [description, setDescription] = useState('');
  const [nameError, setNameError] = useState<string | null>(null);

  function close() {
    setName('');
    setKind('questions');
    setDescription('');
    setNameError(null);
    create.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) {
      setNameError('Enter a name.');
      return;
    }
    setNameError(null);
    create.mutate(
      { name: name.trim(), kind, ...(description.trim() ? { description: description.trim() } : {}) },
      {
        onSuccess: (d) => {
          close();
          navigate(`/projects/${projectId}/datasets/${d.id}`);
        },
      },
    );
  }

  const server = fieldErrors(create.error);
  const nameErr = nameError ?? server.name ?? null;
  return (
    <Dialog open={open} onClose={close} title="New dataset" description="Start empty, then add, import or generate cases.">
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {create.isError && !server.name && <Alert>{errorMessage(create.error)}</Alert>}
        <Field id="dataset-name" label="Name" error={nameErr}>
          <Input id="dataset-name" value={name} onChange={(e) => setName(e.target.value)} invalid={!!nameErr} aria-describedby={describedBy('dataset-name', nameErr)} maxLength={100} data-autofocus />
        </Field>
        <Field id="dataset-kind" label="Kind" hint="Questions, cases with variables and expected output, multi-turn conversations, or recorded agent traces.">
          <Select id="dataset-kind" value={kind} onChange={(e) => setKind(e.target.value as DatasetKind)} className="w-full" aria-describedby="dataset-kind-hint">
            {DATASET_KINDS.map((k) => (
              <option key={k} value={k}>
                {KIND_LABELS[k]}
              </option>
            ))}
          </Select>
        </Field>
        <Field id="dataset-description" label="Description (optional)">
          <Textarea id="dataset-description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Create dataset
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
