import { useState, type FormEvent } from 'react';
import { Alert, Button, describedBy, Field, Input, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { CHANGELOG_MAX, changelogError, MAX_SYSTEM, MAX_TEMPLATE, contentOf, detectVariables, parseTools, toolsText, type PromptVersion, type VersionContent } from '../api';
import { useAddVersion } from '../hooks/usePrompts';
import { FewShotsEditor } from './FewShotsEditor';
import { VariableList } from './VariableList';
import { VersionDiff } from './VersionDiff';

type Errors = Record<string, string>;

/** Server field errors folded onto the editor's fields ("tools[1]" → tools, "few_shots.0.input" → few_shots). */
function serverErrors(e: unknown): Errors {
  const out: Errors = {};
  for (const [k, v] of Object.entries(fieldErrors(e))) {
    const field = k.split(/[[.]/)[0];
    out[field] ??= field === k ? v : `${k}: ${v}`;
  }
  return out;
}

/**
 * Edits a version into a new one: template, system text, few-shots and tools, with the
 * variables found live. "Review changes" shows the diff against the parent; saving then
 * needs a changelog of 10-500 characters. The parent is never changed.
 */
export function VersionEditor({
  projectId,
  promptId,
  parent,
  onSaved,
  onCancel,
}: {
  projectId: number;
  promptId: number;
  parent: PromptVersion;
  onSaved: (v: PromptVersion) => void;
  onCancel: () => void;
}) {
  const save = useAddVersion(projectId, promptId);
  const [template, setTemplate] = useState(parent.template);
  const [system, setSystem] = useState(parent.system ?? '');
  const [shots, setShots] = useState(parent.few_shots);
  const [tools, setTools] = useState(toolsText(contentOf(parent).tools));
  const [note, setNote] = useState('');
  const [local, setLocal] = useState<Errors>({});
  const [reviewing, setReviewing] = useState(false);

  const parsed = parseTools(tools);
  const draft: VersionContent = { template, system: system.trim() ? system : null, few_shots: shots, tools: parsed.tools };
  const server = serverErrors(save.error);
  const err = (k: string) => local[k] ?? server[k] ?? null;

  function check(): Errors {
    const problems: Errors = {};
    if (!template.trim()) problems.template = 'The template must not be empty.';
    else if (template.length > MAX_TEMPLATE) problems.template = `At most ${MAX_TEMPLATE.toLocaleString('en-US')} characters.`;
    if (system.length > MAX_SYSTEM) problems.system = `At most ${MAX_SYSTEM.toLocaleString('en-US')} characters.`;
    if (parsed.error) problems.tools = parsed.error;
    if (shots.some((s) => !s.input.trim() || !s.output.trim())) problems.few_shots = 'Every example needs an input and an output.';
    return problems;
  }

  function review(e: FormEvent) {
    e.preventDefault();
    const problems = check();
    setLocal(problems);
    save.reset();
    if (Object.keys(problems).length === 0) setReviewing(true);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const problem = changelogError(note);
    setLocal(problem ? { note: problem } : {});
    if (problem) return;
    save.mutate(
      { ...draft, note: note.trim(), parent_id: parent.id },
      {
        onSuccess: (saved) => onSaved(saved),
        // A field the server refused is shown at its field, back in the editor.
        onError: (error) => {
          const fields = Object.keys(serverErrors(error));
          if (fields.some((f) => f !== 'note')) setReviewing(false);
        },
      },
    );
  }

  const unknown = save.isError && !Object.keys(server).length;
  if (reviewing) {
    const noteErr = err('note');
    return (
      <form onSubmit={submit} className="space-y-4" noValidate aria-label={`Save a new version from v${parent.number}`}>
        <h3 className="text-base font-semibold text-zinc-900">Review changes against v{parent.number}</h3>
        <VersionDiff from={contentOf(parent)} to={draft} fromLabel={`v${parent.number}`} toLabel="new version" />
        <Field id="version-note" label="Changelog" error={noteErr} hint={`Why this version exists: ${note.trim().length}/${CHANGELOG_MAX} characters, at least 10.`}>
          <Input
            id="version-note"
            value={note}
            onChange={(e) => setNote(e.target.value)}
            invalid={!!noteErr}
            aria-describedby={describedBy('version-note', noteErr, true)}
            maxLength={CHANGELOG_MAX + 20}
            data-autofocus
          />
        </Field>
        {unknown && <Alert>{errorMessage(save.error)}</Alert>}
        <div className="flex flex-wrap justify-end gap-2">
          <Button variant="secondary" onClick={() => setReviewing(false)}>
            Back to editing
          </Button>
          <Button type="submit" loading={save.isPending}>
            Save as new version
          </Button>
        </div>
      </form>
    );
  }

  return (
    <form onSubmit={review} className="space-y-4" noValidate aria-label={`Edit v${parent.number}`}>
      {unknown && <Alert>{errorMessage(save.error)}</Alert>}
      <Field id="version-template" label="Template" error={err('template')} hint={`The user message; {{variable}} is filled from each case's input. ${template.length.toLocaleString('en-US')} / ${MAX_TEMPLATE.toLocaleString('en-US')} characters.`}>
        <Textarea
          id="version-template"
          value={template}
          onChange={(e) => setTemplate(e.target.value)}
          invalid={!!err('template')}
          aria-describedby={describedBy('version-template', err('template'), true)}
          className="min-h-40 font-mono"
        />
      </Field>
      <Field id="version-system" label="System text (optional)" error={err('system')}>
        <Textarea id="version-system" value={system} onChange={(e) => setSystem(e.target.value)} invalid={!!err('system')} className="font-mono" />
      </Field>
      <VariableList variables={detectVariables(template, system)} />
      <FewShotsEditor shots={shots} onChange={setShots} error={err('few_shots')} />
      <Field
        id="version-tools"
        label="Tools (JSON, optional)"
        error={err('tools')}
        hint='A JSON array of {"name", "description", "parameters": JSON Schema with "type": "object"}; kept with the version.'
      >
        <Textarea
          id="version-tools"
          value={tools}
          onChange={(e) => setTools(e.target.value)}
          invalid={!!err('tools')}
          aria-describedby={describedBy('version-tools', err('tools'), true)}
          className="min-h-28 font-mono"
          spellCheck={false}
        />
      </Field>
      {parsed.error && !err('tools') && <p className="text-sm text-amber-800">{parsed.error}</p>}
      <div className="flex flex-wrap justify-end gap-2">
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
        <Button type="submit">Review changes</Button>
      </div>
    </form>
  );
}
