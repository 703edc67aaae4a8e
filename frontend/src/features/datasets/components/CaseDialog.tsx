import { useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, Dialog, Field, Input } from '@/components/ui';
import { errorMessage, isApiError, isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import type { Case, CaseBody, DatasetKind } from '../api';
import { useAddCases, useSaveCase } from '../hooks/useDatasets';
import { CaseFields } from './CaseFields';
import { bodyOf, draftOf, emptyDraft, serverErrors, type CaseDraft, type DraftErrors } from './caseDraft';

/**
 * Add cases (one or several: "Add another case" before saving, all saved as one new
 * version) or edit one, with a form per dataset kind. Bad input shows at its field and
 * keeps everything entered.
 */
export function CaseDialog({
  projectId,
  datasetId,
  kind,
  open,
  editing,
  onClose,
}: {
  projectId: number;
  datasetId: number;
  kind: DatasetKind;
  open: boolean;
  editing: Case | null;
  onClose: () => void;
}) {
  const save = useSaveCase(projectId, datasetId);
  const queryClient = useQueryClient();
  const add = useAddCases(projectId, datasetId);
  const [drafts, setDrafts] = useState<CaseDraft[]>([]);
  const [errors, setErrors] = useState<DraftErrors[]>([]);
  const [note, setNote] = useState('');

  useEffect(() => {
    if (!open) return;
    setDrafts([editing ? draftOf(kind, editing) : emptyDraft(kind)]);
    setErrors([]);
    setNote('');
  }, [open, editing, kind]);

  function close() {
    save.reset();
    add.reset();
    onClose();
  }

  const mutation = editing ? save : add;
  const failed = mutation.isError ? mutation.error : null;
  const fieldErrors = (i: number): DraftErrors => ({
    ...(failed && isApiError(failed) && failed.status === 422 ? serverErrors(failed.errors, i) : {}),
    ...(errors[i] ?? {}),
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    mutation.reset();
    const checked = drafts.map((d) => bodyOf(kind, d));
    setErrors(checked.map((c) => c.errors));
    if (checked.some((c) => !c.body)) return;
    const bodies = checked.map((c) => c.body as CaseBody);
    if (editing) save.mutate({ id: editing.id, version: editing.id, body: { ...bodies[0], ...(note.trim() ? { note: note.trim() } : {}) } }, { onSuccess: close });
    else add.mutate({ cases: bodies, note: note.trim() || null }, { onSuccess: close });
  }

  const change = (i: number) => (d: CaseDraft) => {
    setDrafts((all) => all.map((x, j) => (j === i ? d : x)));
    setErrors((all) => all.map((x, j) => (j === i ? {} : x)));
  };
  const count = drafts.length;
  const title = editing ? 'Edit case' : 'Add case';
  const stale = isStaleWrite(failed);
  const problem = stale ? null : failed && !(isApiError(failed) && failed.status === 422) ? errorMessage(failed) : failed ? `${errorMessage(failed)}: see the fields marked below.` : null;
  const invalid = errors.filter((x) => Object.keys(x).length).length;
  return (
    <Dialog open={open} onClose={close} title={title} size="wide" description={editing ? 'Saving creates a new version of the dataset; earlier versions stay as they were.' : 'All the cases below are saved together as one new version of the dataset.'}>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <StaleWriteNotice
          error={failed}
          edit={drafts[0] ? JSON.stringify(bodyOf(kind, drafts[0]).body ?? {}) : undefined}
          onReload={() => {
            save.reset();
            void queryClient.invalidateQueries({ queryKey: qk.datasets(projectId) });
          }}
        />
        {problem && <Alert>{problem}</Alert>}
        {invalid > 0 && <Alert>{invalid === 1 && count === 1 ? 'Fix the fields marked below.' : `${invalid} of ${count} cases need fixing: see the fields marked below.`}</Alert>}
        {drafts.map((d, i) => (
          <section key={i} aria-label={count > 1 ? `Case ${i + 1} of ${count}` : undefined} className={count > 1 ? 'space-y-3 rounded-xl border border-zinc-200 p-3' : undefined}>
            {count > 1 && (
              <div className="flex items-center justify-between">
                <h3 className="text-sm font-semibold text-zinc-900">
                  Case {i + 1} of {count}
                </h3>
                <Button variant="ghost" size="sm" onClick={() => { setDrafts((all) => all.filter((_, j) => j !== i)); setErrors((all) => all.filter((_, j) => j !== i)); mutation.reset(); }}>
                  Remove case {i + 1}
                </Button>
              </div>
            )}
            <CaseFields kind={kind} n={i} draft={d} errors={fieldErrors(i)} onChange={change(i)} />
          </section>
        ))}
        <Field id="case-note" label="Version note (optional)">
          <Input id="case-note" value={note} maxLength={500} onChange={(e) => setNote(e.target.value)} />
        </Field>
        <div className="flex flex-wrap justify-end gap-2">
          {!editing && (
            <Button variant="secondary" className="mr-auto" onClick={() => { setDrafts((all) => [...all, emptyDraft(kind)]); mutation.reset(); }}>
              Add another case
            </Button>
          )}
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={mutation.isPending}>
            {editing ? 'Save case' : count > 1 ? `Add ${count} cases` : 'Add case'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
