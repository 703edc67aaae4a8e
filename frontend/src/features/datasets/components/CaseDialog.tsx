import { useEffect, useState, type FormEvent } from 'react';
import { Alert, Button, describedBy, Dialog, Field, Input, Select, Textarea } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { DIFFICULTIES, type Case, type CaseBody, type DatasetKind, type Difficulty, type JsonObject } from '../api';
import { useSaveCase } from '../hooks/useDatasets';

/** What a new case of each kind starts from, and what its input holds. */
const TEMPLATES: Record<DatasetKind, { input: JsonObject; expected: JsonObject | null; trace: JsonObject | null; hint: string; expectedHint?: string }> = {
  questions: { input: { question: '' }, expected: null, trace: null, hint: 'A JSON object: {"question": "…"}.', expectedHint: 'A reference answer, if any: {"answer": "…"}.' },
  cases: { input: { variable: '' }, expected: { output: '' }, trace: null, hint: 'The prompt’s template variables: {"city": "Paris"}.', expectedHint: 'The expected output: {"output": "…"}.' },
  conversations: {
    input: { messages: [{ role: 'user', content: '' }] },
    expected: { turns: [''] },
    trace: null,
    expectedHint: 'The ground truth of each user turn, in order: {"turns": ["…"]}.',
    hint: '1 to 10 user turns: {"messages": [{"role": "user", "content": "…"}]}; expected holds the ground truth per user turn.',
  },
  traces: {
    input: {},
    expected: null,
    trace: { messages: [{ role: 'user', content: '' }] },
    hint: 'Usually empty for a trace; the trace below holds the messages.',
  },
};

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

function parseObject(text: string, allowEmpty: boolean): { value: JsonObject | null; error: string | null } {
  if (!text.trim()) return allowEmpty ? { value: null, error: null } : { value: null, error: 'Enter a JSON object.' };
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { value: null, error: 'Must be a JSON object, in braces.' };
    return { value: v as JsonObject, error: null };
  } catch (e) {
    return { value: null, error: `Not valid JSON: ${(e as Error).message}` };
  }
}

/** Add or edit one case; saving makes a new version of the dataset. */
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
  const template = TEMPLATES[kind] ?? TEMPLATES.questions;
  const [input, setInput] = useState('');
  const [expected, setExpected] = useState('');
  const [tags, setTags] = useState('');
  const [difficulty, setDifficulty] = useState('');
  const [metadata, setMetadata] = useState('');
  const [trace, setTrace] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});

  useEffect(() => {
    if (!open) return;
    setInput(pretty(editing ? editing.input : template.input));
    setExpected(editing ? (editing.expected ? pretty(editing.expected) : '') : template.expected ? pretty(template.expected) : '');
    setTags(editing ? editing.tags.join(', ') : '');
    setDifficulty(editing?.difficulty ?? '');
    setMetadata(editing && Object.keys(editing.metadata ?? {}).length ? pretty(editing.metadata) : '');
    setTrace(editing ? (editing.trace ? pretty(editing.trace) : '') : template.trace ? pretty(template.trace) : '');
    setErrors({});
  }, [open, editing]);

  function close() {
    save.reset();
    onClose();
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const i = parseObject(input, false);
    const x = parseObject(expected, true);
    const m = parseObject(metadata, true);
    const t = parseObject(trace, true);
    const next: Record<string, string> = {};
    if (i.error) next.input = i.error;
    if (x.error) next.expected = x.error;
    if (m.error) next.metadata = m.error;
    if (t.error) next.trace = t.error;
    setErrors(next);
    if (Object.keys(next).length) return;
    const body: CaseBody = {
      input: i.value ?? {},
      expected: x.value,
      tags: tags.split(',').map((t) => t.trim()).filter(Boolean),
      difficulty: (difficulty || null) as Difficulty | null,
      metadata: m.value ?? {},
      ...(kind === 'traces' || t.value ? { trace: t.value } : {}),
    };
    save.mutate({ id: editing?.id ?? null, body }, { onSuccess: close });
  }

  const title = editing ? 'Edit case' : 'Add case';
  return (
    <Dialog open={open} onClose={close} title={title} size="wide" description="Saving creates a new version of the dataset; earlier versions stay as they were.">
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {save.isError && <Alert>{errorMessage(save.error)}</Alert>}
        <Field id="case-input" label="Input (JSON)" error={errors.input} hint={template.hint}>
          <Textarea id="case-input" className="min-h-32 font-mono" value={input} onChange={(e) => setInput(e.target.value)} invalid={!!errors.input} aria-describedby={describedBy('case-input', errors.input, true)} data-autofocus />
        </Field>
        <Field id="case-expected" label="Expected (JSON, optional)" error={errors.expected} hint={template.expectedHint}>
          <Textarea id="case-expected" className="font-mono" value={expected} onChange={(e) => setExpected(e.target.value)} invalid={!!errors.expected} aria-describedby={describedBy('case-expected', errors.expected, !!template.expectedHint)} />
        </Field>
        <div className="grid gap-4 sm:grid-cols-2">
          <Field id="case-tags" label="Tags" hint="Separated by commas.">
            <Input id="case-tags" value={tags} onChange={(e) => setTags(e.target.value)} aria-describedby="case-tags-hint" />
          </Field>
          <Field id="case-difficulty" label="Difficulty">
            <Select id="case-difficulty" className="w-full" value={difficulty} onChange={(e) => setDifficulty(e.target.value)}>
              <option value="">Not set</option>
              {DIFFICULTIES.map((d) => (
                <option key={d} value={d}>
                  {d}
                </option>
              ))}
            </Select>
          </Field>
        </div>
        {(kind === 'traces' || trace.trim()) && (
          <Field id="case-trace" label="Trace (JSON)" error={errors.trace} hint="Messages with roles system, user, assistant or tool; tool_calls and tool_call_id where they apply.">
            <Textarea id="case-trace" className="min-h-32 font-mono" value={trace} onChange={(e) => setTrace(e.target.value)} invalid={!!errors.trace} aria-describedby={describedBy('case-trace', errors.trace, true)} />
          </Field>
        )}
        <Field id="case-metadata" label="Metadata (JSON, optional)" error={errors.metadata}>
          <Textarea id="case-metadata" className="min-h-16 font-mono" value={metadata} onChange={(e) => setMetadata(e.target.value)} invalid={!!errors.metadata} aria-describedby={describedBy('case-metadata', errors.metadata)} />
        </Field>
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button type="submit" loading={save.isPending}>
            {editing ? 'Save case' : 'Add case'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
