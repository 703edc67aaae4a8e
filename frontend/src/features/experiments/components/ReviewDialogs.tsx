import { useState } from 'react';
import { Alert, Button, Dialog, Field, Input, Textarea, describedBy } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { previewPatch } from '../lib/unifiedDiff';
import { DiffView } from './DiffView';

type Submit<T> = (v: T) => Promise<unknown>;

/** Reject: a reason is required (it goes into the audit log with the decision). */
export function RejectDialog({ open, onClose, onSubmit }: { open: boolean; onClose: () => void; onSubmit: Submit<string> }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (reason.trim().length < 3) return setError('Say why you reject it (at least 3 characters).');
    setBusy(true);
    try {
      await onSubmit(reason.trim());
      onClose();
    } catch (e) {
      setError(fieldErrors(e).reason ?? errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      title="Reject the suggestion"
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button variant="danger" loading={busy} onClick={() => void submit()}>
            Reject
          </Button>
        </>
      }
    >
      <Field id="reject-reason" label="Reason" error={error}>
        <Textarea id="reject-reason" data-autofocus rows={3} value={reason} onChange={(e) => setReason(e.target.value)} invalid={!!error} aria-describedby={describedBy('reject-reason', error)} />
      </Field>
    </Dialog>
  );
}

/** Edit the diff by hand; the preview applies it locally, the server validates it again (guardrails). */
export function EditDiffDialog({ open, onClose, base, initial, onSubmit }: { open: boolean; onClose: () => void; base: string | null; initial: string; onSubmit: Submit<{ diff: string; comment: string }> }) {
  const [diff, setDiff] = useState(initial);
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const preview = base !== null ? previewPatch(base, diff) : null;
  const submit = async () => {
    setBusy(true);
    setErrors([]);
    try {
      await onSubmit({ diff, comment: comment.trim() });
      onClose();
    } catch (e) {
      const fe = fieldErrors(e);
      const list = Object.values(fe);
      setErrors(list.length ? list : [errorMessage(e)]);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      size="wide"
      title="Edit the diff"
      description="The server checks it with the refiner's guardrails; once saved, approve it to create the next prompt version."
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button loading={busy} onClick={() => void submit()}>
            Save edited diff
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        <Field id="edit-diff" label="Unified diff">
          <Textarea id="edit-diff" data-autofocus rows={10} className="font-mono" value={diff} onChange={(e) => setDiff(e.target.value)} invalid={errors.length > 0} />
        </Field>
        {base !== null && (
          <p className="text-sm" role="status" data-testid="edit-preview-state">
            {preview === null ? <span className="text-red-700">This diff does not apply to the current prompt.</span> : <span className="text-emerald-700">Applies cleanly.</span>}
          </p>
        )}
        {diff.trim() && <DiffView diff={diff} label="Edited diff" />}
        <Field id="edit-comment" label="Comment (optional, audited)">
          <Input id="edit-comment" value={comment} onChange={(e) => setComment(e.target.value)} />
        </Field>
        {errors.length > 0 && (
          <Alert>
            <ul className="list-disc pl-4" data-testid="edit-errors">
              {errors.map((m) => (
                <li key={m}>{m}</li>
              ))}
            </ul>
          </Alert>
        )}
      </div>
    </Dialog>
  );
}

/** Counterexamples: cases added to a new dataset version used from the next iteration. */
export function CounterexamplesDialog({ open, onClose, variables, onSubmit }: { open: boolean; onClose: () => void; variables: string[]; onSubmit: Submit<Array<{ input: Record<string, string>; expected: string | null }>> }) {
  const vars = variables.length ? variables : ['input'];
  const blank = () => ({ input: Object.fromEntries(vars.map((v) => [v, ''])) as Record<string, string>, expected: '' });
  const [rows, setRows] = useState([blank()]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (rows.some((r) => vars.some((v) => !r.input[v]?.trim()))) return setError('Fill every variable of every case.');
    setBusy(true);
    try {
      await onSubmit(rows.map((r) => ({ input: r.input, expected: r.expected.trim() || null })));
      setRows([blank()]);
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onClose={onClose}
      size="wide"
      title="Add counterexamples"
      description="They go into a new version of the dataset, used from the next iteration on."
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button loading={busy} onClick={() => void submit()}>
            Add {rows.length} case{rows.length === 1 ? '' : 's'}
          </Button>
        </>
      }
    >
      <div className="space-y-3">
        {rows.map((r, i) => (
          <fieldset key={i} className="space-y-2 rounded-xl border border-zinc-200 p-2">
            <legend className="px-1 text-sm font-medium">Case {i + 1}</legend>
            {vars.map((v) => (
              <Field key={v} id={`cx-${i}-${v}`} label={v}>
                <Input id={`cx-${i}-${v}`} value={r.input[v] ?? ''} onChange={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, input: { ...x.input, [v]: e.target.value } } : x)))} />
              </Field>
            ))}
            <Field id={`cx-${i}-expected`} label="Expected (optional)">
              <Input id={`cx-${i}-expected`} value={r.expected} onChange={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, expected: e.target.value } : x)))} />
            </Field>
          </fieldset>
        ))}
        <Button size="sm" variant="secondary" onClick={() => setRows([...rows, blank()])}>
          + Another case
        </Button>
        {error && <Alert>{error}</Alert>}
      </div>
    </Dialog>
  );
}
