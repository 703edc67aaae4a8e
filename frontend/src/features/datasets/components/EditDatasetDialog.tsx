import { useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, describedBy, Dialog, Field, Input, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors, isStaleWrite } from '@/api/errors';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import type { Dataset } from '../api';
import { useUpdateDataset } from '../hooks/useDatasets';

/** Rename a dataset or change its description (no new version: cases are untouched). */
export function EditDatasetDialog({ projectId, dataset, open, onClose }: { projectId: number; dataset: Dataset; open: boolean; onClose: () => void }) {
  const update = useUpdateDataset(projectId);
  const queryClient = useQueryClient();
  const [name, setName] = useState(dataset.name);
  const [description, setDescription] = useState(dataset.description ?? '');
  const [nameError, setNameError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    setName(dataset.name);
    setDescription(dataset.description ?? '');
    setNameError(null);
    // Only on opening (or another dataset): a reload after a stale write must keep what was typed.
  }, [open, dataset.id]);

  function close() {
    update.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) {
      setNameError('Enter a name.');
      return;
    }
    setNameError(null);
    update.mutate({ id: dataset.id, body: { name: name.trim(), description: description.trim() || null }, version: dataset.row_version }, { onSuccess: close });
  }

  const server = fieldErrors(update.error);
  const nameErr = nameError ?? server.name ?? null;
  return (
    <Dialog open={open} onClose={close} title="Edit dataset details">
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <StaleWriteNotice
          error={update.error}
          edit={`name "${name}", description "${description}"`}
          onReload={() => {
            update.reset();
            void queryClient.invalidateQueries({ queryKey: qk.datasets(projectId) });
          }}
        />
        {update.isError && !isStaleWrite(update.error) && !server.name && <Alert>{errorMessage(update.error)}</Alert>}
        <Field id="edit-dataset-name" label="Name" error={nameErr}>
          <Input id="edit-dataset-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} invalid={!!nameErr} aria-describedby={describedBy('edit-dataset-name', nameErr)} data-autofocus />
        </Field>
        <Field id="edit-dataset-description" label="Description (optional)">
          <Textarea id="edit-dataset-description" value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={update.isPending}>
            Save
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
