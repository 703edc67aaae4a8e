import { Badge, Button, Field, Input, Textarea, describedBy } from '@/components/ui';
import { detectVariables } from '../../lib/draft';
import { AssistPanel } from '../AssistPanel';
import type { StepProps } from './types';

/** FR-EC-003: the seed prompt (50–20,000 characters) with its system text, few-shots and tools. */
export function PromptStep({ projectId, experimentId, draft, update, errors }: StepProps) {
  const vars = detectVariables(draft.prompt_text);
  const shots = draft.few_shots;
  return (
    <div className="space-y-4">
      <AssistPanel
        projectId={projectId}
        experimentId={experimentId}
        actions={[
          {
            kind: 'prompts',
            path: 'prompts',
            label: 'Draft 3 prompts',
            input: { objective: draft.objective, count: 3, rubric: draft.rubric.filter((c) => c.name.trim()).map((c) => ({ name: c.name, description: c.description, weight: c.weight, scale: { min: c.scale_min, max: c.scale_max } })) },
            disabled: draft.objective.trim().length < 20 || !draft.rubric.some((c) => c.name.trim()),
          },
          { kind: 'improve', path: 'prompt', label: 'Improve', input: { objective: draft.objective, prompt: draft.prompt_text }, disabled: draft.prompt_text.length < 1 || !draft.objective.trim() },
        ]}
        onPick={(text, extra) => update({ prompt_text: text, ...(extra?.system_text !== undefined ? { system_text: String(extra.system_text ?? '') } : {}) })}
      />
      <Field id="seed-text" label="Prompt" error={errors.prompt_text} hint={`${draft.prompt_text.length} / 20000 characters, about ${Math.ceil(draft.prompt_text.length / 4)} tokens.`}>
        <Textarea
          id="seed-text"
          rows={12}
          className="font-mono"
          value={draft.prompt_text}
          onChange={(e) => update({ prompt_text: e.target.value })}
          placeholder="You are a helpful assistant… When the user asks {{question}}, answer…"
          invalid={!!errors.prompt_text}
          aria-describedby={describedBy('seed-text', errors.prompt_text, true)}
        />
      </Field>
      <p className="flex flex-wrap items-center gap-2 text-sm text-zinc-700" data-testid="variables">
        Variables detected:{' '}
        {vars.length === 0 ? <span className="text-zinc-500">none</span> : vars.map((v) => <Badge key={v} tone="indigo">{`{{${v}}}`}</Badge>)}
      </p>
      <details className="rounded-xl border border-zinc-200 p-3" open={!!(draft.system_text || shots.length || draft.tools_schema)}>
        <summary className="cursor-pointer text-sm font-medium">Advanced options</summary>
        <div className="mt-3 space-y-4">
          <Field id="seed-system" label="System message (optional)" error={errors.system_text}>
            <Textarea id="seed-system" rows={3} value={draft.system_text} onChange={(e) => update({ system_text: e.target.value })} invalid={!!errors.system_text} />
          </Field>
          <fieldset className="space-y-2">
            <legend className="text-sm font-medium text-zinc-900">Few-shot examples (optional, up to 10)</legend>
            {shots.map((s, i) => (
              <div key={i} className="grid gap-2 rounded-xl border border-zinc-200 p-2 sm:grid-cols-[1fr_1fr_auto]">
                <Input aria-label={`Example ${i + 1} user`} placeholder="User" value={s.user} onChange={(e) => update({ few_shots: shots.map((x, j) => (j === i ? { ...x, user: e.target.value } : x)) })} />
                <Input aria-label={`Example ${i + 1} assistant`} placeholder="Assistant" value={s.assistant} onChange={(e) => update({ few_shots: shots.map((x, j) => (j === i ? { ...x, assistant: e.target.value } : x)) })} />
                <Button size="sm" variant="ghost" onClick={() => update({ few_shots: shots.filter((_, j) => j !== i) })} aria-label={`Remove example ${i + 1}`}>
                  Remove
                </Button>
                {errors[`few_shots.${i}`] && <p className="text-sm text-red-700 sm:col-span-3">{errors[`few_shots.${i}`]}</p>}
              </div>
            ))}
            <Button size="sm" variant="secondary" disabled={shots.length >= 10} onClick={() => update({ few_shots: [...shots, { user: '', assistant: '' }] })}>
              + Add example
            </Button>
            {errors.few_shots && <p className="text-sm text-red-700">{errors.few_shots}</p>}
          </fieldset>
          <Field id="seed-tools" label="Tool definitions (JSON, optional)" error={errors.tools_schema}>
            <Textarea id="seed-tools" rows={4} className="font-mono" value={draft.tools_schema} onChange={(e) => update({ tools_schema: e.target.value })} invalid={!!errors.tools_schema} />
          </Field>
        </div>
      </details>
    </div>
  );
}
