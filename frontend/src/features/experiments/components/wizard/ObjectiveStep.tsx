import { Field, Input, Textarea, describedBy } from '@/components/ui';
import { AssistPanel } from '../AssistPanel';
import { TemplatePicker } from '../TemplatePicker';
import type { StepProps } from './types';

/** FR-EC-001: what the prompt should achieve (20–2,000 characters), or a template. */
export function ObjectiveStep({ projectId, experimentId, draft, update, errors, onTemplate, templateBusy }: StepProps & { onTemplate: (key: string) => void; templateBusy: string | null }) {
  const n = draft.objective.trim().length;
  return (
    <div className="space-y-4">
      <Field id="exp-name" label="Experiment name" error={errors.name} hint="Optional: defaults to the template's or objective's first words.">
        <Input id="exp-name" value={draft.name} maxLength={200} onChange={(e) => update({ name: e.target.value })} invalid={!!errors.name} aria-describedby={describedBy('exp-name', errors.name, true)} />
      </Field>
      <Field
        id="exp-objective"
        label="What are you trying to achieve with this prompt?"
        error={errors.objective}
        hint={`Be specific about the task, audience and desired output quality. ${n} / 2000 characters. Type a few hints and let AI assist draft options.`}
      >
        <Textarea
          id="exp-objective"
          rows={6}
          value={draft.objective}
          onChange={(e) => update({ objective: e.target.value })}
          placeholder="Example: Generate helpful, empathetic customer support responses that resolve issues quickly while keeping the brand voice…"
          invalid={!!errors.objective}
          aria-describedby={describedBy('exp-objective', errors.objective, true)}
        />
      </Field>
      <AssistPanel
        projectId={projectId}
        experimentId={experimentId}
        actions={[
          { kind: 'objectives', path: 'objectives', label: 'Draft 3 options', input: { hints: draft.objective.trim().slice(0, 500), count: 3 }, disabled: n < 10 },
          { kind: 'improve', path: 'objective', label: 'Improve', input: { objective: draft.objective, mode: 'improve' }, disabled: n < 1 },
          { kind: 'details', path: 'objective', label: 'Add details', input: { objective: draft.objective, mode: 'details' }, disabled: n < 1 },
        ]}
        onPick={(text) => update({ objective: text })}
      />
      <TemplatePicker projectId={projectId} onPick={onTemplate} busyKey={templateBusy} />
    </div>
  );
}
