import { useState, type FormEvent } from 'react';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, Checkbox, describedBy, Field, Input, Label, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors, isStaleWrite } from '@/api/errors';
import { formatMicros } from '@/lib/money';
import { useFocusFirstInvalid } from '@/lib/useFocusFirstInvalid';
import { settingsKey, useSaveSettings } from '../hooks/useSettings';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { buildPatch, formOf, RETRIES_MAX, SERVER_FIELDS, type ProjectSettings, type SettingsErrors, type SettingsForm } from '../settingsForm';
import { BudgetMeter } from './BudgetMeter';

type TextKey = Exclude<keyof SettingsForm, 'codeExecution' | 'description'>;

/** The settings form: one Save sends only what changed; read-only below admin. */
export function SettingsFormView({ projectId, settings }: { projectId: number; settings: ProjectSettings }) {
  const save = useSaveSettings(projectId);
  const queryClient = useQueryClient();
  const [form, setForm] = useState<SettingsForm>(() => formOf(settings));
  const [errors, setErrors] = useState<SettingsErrors>({});
  const [notice, setNotice] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const { ref, focusFirstInvalid } = useFocusFirstInvalid<HTMLFormElement>();
  const readOnly = !settings.can_edit;
  const set = (patch: Partial<SettingsForm>) => {
    setNotice(null);
    setForm((f) => ({ ...f, ...patch }));
  };

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setProblem(null);
    const { patch, errors: errs } = buildPatch(form, settings);
    setErrors(errs);
    if (!patch) return focusFirstInvalid();
    if (Object.keys(patch).length === 0) return setNotice('Nothing changed.');
    save.mutate({ body: patch, version: settings.row_version }, {
      onSuccess: (saved) => {
        setForm(formOf(saved));
        setNotice('Settings saved.');
      },
      onError: (err) => {
        if (isStaleWrite(err)) return; // the StaleWriteNotice says it; the form keeps what was typed
        const fe = fieldErrors(err);
        const mapped: SettingsErrors = {};
        for (const [k, v] of Object.entries(fe)) if (SERVER_FIELDS[k]) mapped[SERVER_FIELDS[k]] = v;
        setErrors(mapped);
        setProblem(Object.keys(mapped).length ? 'Some settings are not valid.' : errorMessage(err));
      },
    });
  }

  const text = (key: TextKey, label: string, hint: string, extra: { inputMode?: 'decimal' | 'numeric'; placeholder?: string } = {}) => (
    <Field id={`settings-${key}`} label={label} error={errors[key]} hint={hint}>
      <Input
        id={`settings-${key}`}
        value={form[key]}
        readOnly={readOnly}
        invalid={!!errors[key]}
        aria-describedby={describedBy(`settings-${key}`, errors[key], true)}
        onChange={(e) => set({ [key]: e.target.value })}
        {...extra}
      />
    </Field>
  );

  return (
    <form ref={ref} noValidate onSubmit={onSubmit} aria-label="Project settings" className="space-y-6">
      {readOnly && <Alert tone="info">Only admins and owners change settings; you can read them.</Alert>}
      <StaleWriteNotice
        error={save.error}
        onReload={() => {
          save.reset();
          void queryClient.invalidateQueries({ queryKey: settingsKey(projectId) });
        }}
      />
      {problem && <Alert>{problem}</Alert>}
      <Card>
        <CardHeader>
          <CardTitle>General</CardTitle>
        </CardHeader>
        <CardContent className="space-y-4">
          {text('name', 'Name', 'Letters, digits, spaces, hyphens and underscores.')}
          <Field id="settings-description" label="Description" error={errors.description} hint="Optional, up to 1000 characters.">
            <Textarea
              id="settings-description"
              value={form.description}
              readOnly={readOnly}
              rows={3}
              aria-describedby={describedBy('settings-description', errors.description, true)}
              onChange={(e) => set({ description: e.target.value })}
            />
          </Field>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Budget</CardTitle>
        </CardHeader>
        <CardContent className="space-y-4">
          <BudgetMeter settings={settings} />
          <div className="grid gap-4 sm:grid-cols-2">
            {text('budget', 'Project budget in dollars', 'Across every run of the project; empty for no cap.', { inputMode: 'decimal', placeholder: 'No cap' })}
            {text('alertPercent', 'Alert at (% of the budget)', 'A run raises a budget alert when the project spend reaches this share.', { inputMode: 'decimal' })}
          </div>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Run defaults</CardTitle>
        </CardHeader>
        <CardContent className="grid gap-4 sm:grid-cols-3">
          {text('concurrency', 'Concurrency', 'Calls in flight per run, all workers together; empty: the server default.', { inputMode: 'numeric', placeholder: 'Server default' })}
          {text('timeout', 'Timeout in seconds', 'Per attempt of a call; empty: 120.', { inputMode: 'numeric', placeholder: '120' })}
          {text('maxRetries', 'Max retries', `Retries of a rate limit, timeout or server error, 0 to ${RETRIES_MAX}; empty: 2.`, { inputMode: 'numeric', placeholder: '2' })}
          <p className="text-sm text-zinc-500 sm:col-span-3">New runs use these unless their settings say otherwise.</p>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Code execution</CardTitle>
        </CardHeader>
        <CardContent className="space-y-2">
          <div className="flex items-start gap-2">
            <Checkbox
              id="settings-codeExecution"
              checked={form.codeExecution}
              disabled={readOnly}
              onChange={(e) => set({ codeExecution: e.target.checked })}
              aria-describedby="settings-codeExecution-hint"
              className="mt-1"
            />
            <Label htmlFor="settings-codeExecution">Allow the code execution scorer</Label>
          </div>
          <p id="settings-codeExecution-hint" className="text-sm text-zinc-500">
            Runs the code in model outputs in a sandbox (no network, limited time and memory). Every change is recorded in the activity log.
          </p>
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>EvalArena</CardTitle>
        </CardHeader>
        <CardContent className="space-y-2">
          {text(
            'arenaAllowance',
            'Arena allowance in dollars',
            'What judge runs in EvalArena paid by this project may cost in all for members below editor; empty: only editors and up may run them.',
            { inputMode: 'decimal', placeholder: 'Editors and up only' },
          )}
          <p className="text-sm text-zinc-600" data-testid="arena-allowance-summary">
            {settings.arena_allowance_micros === null
              ? 'Now: viewers and reviewers cannot run paid judges.'
              : `Now: viewers and reviewers may spend up to ${formatMicros(settings.arena_allowance_micros)} in all.`}
          </p>
        </CardContent>
      </Card>
      {notice && <Alert tone="success">{notice}</Alert>}
      {!readOnly && (
        <div className="flex justify-end">
          <Button type="submit" loading={save.isPending}>
            Save settings
          </Button>
        </div>
      )}
    </form>
  );
}
