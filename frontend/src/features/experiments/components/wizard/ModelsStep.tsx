import { useState } from 'react';
import { Checkbox, Field, Input, Skeleton, describedBy } from '@/components/ui';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { formatMicros } from '@/lib/money';
import { gridSize, type TargetDraft } from '../../lib/draft';
import type { StepProps } from './types';

/** "0.2, 0.7" → [0.2, 0.7]; null when a part is not a number. */
export function parseList(text: string): number[] | null {
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  const nums = parts.map(Number);
  return nums.some((n) => Number.isNaN(n)) ? null : nums;
}

function ListInput({ id, label, value, onChange, error, hint }: { id: string; label: string; value: number[]; onChange: (v: number[]) => void; error?: string; hint: string }) {
  const [text, setText] = useState(value.join(', '));
  const [bad, setBad] = useState(false);
  return (
    <Field id={id} label={label} error={bad ? 'Numbers separated by commas.' : error} hint={hint}>
      <Input
        id={id}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const parsed = parseList(e.target.value);
          setBad(parsed === null);
          if (parsed) onChange(parsed);
        }}
        invalid={bad || !!error}
        aria-describedby={describedBy(id, bad ? 'x' : error, true)}
      />
    </Field>
  );
}

/** FR-EC-005: models × a parameter grid; each combination is one target of every iteration. */
export function ModelsStep({ projectId, draft, update, errors }: StepProps) {
  const models = useModelConfigs(projectId, false);
  const byId = new Map(draft.targets.map((t) => [t.model_config_id, t]));
  const setTarget = (id: number, patch: Partial<TargetDraft>) => update({ targets: draft.targets.map((t) => (t.model_config_id === id ? { ...t, ...patch } : t)) });
  const toggle = (id: number) =>
    update({ targets: byId.has(id) ? draft.targets.filter((t) => t.model_config_id !== id) : [...draft.targets, { model_config_id: id, temperature: 1, max_tokens: 4096 }] });
  return (
    <div className="space-y-5">
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-zinc-900">Models to test the prompt on</legend>
        {models.isPending && <Skeleton className="h-20 w-full" />}
        {models.data?.items.length === 0 && <p className="text-sm text-zinc-600">No models yet: add one on the Models tab.</p>}
        <ul className="space-y-2">
          {models.data?.items.map((m) => {
            const t = byId.get(m.id);
            const per1k =
              m.input_price_per_mtok_micros !== null && m.output_price_per_mtok_micros !== null
                ? `${formatMicros(Math.round((m.input_price_per_mtok_micros + m.output_price_per_mtok_micros) / 2000))}/1K`
                : 'unpriced';
            return (
              <li key={m.id} className="rounded-xl border border-zinc-200 p-3">
                <label className="flex flex-wrap items-center justify-between gap-2 text-sm">
                  <span className="flex min-w-0 items-center gap-2">
                    <Checkbox checked={!!t} onChange={() => toggle(m.id)} />
                    <span className="min-w-0 break-words font-medium">{m.name}</span>
                  </span>
                  <span className="text-zinc-600">{per1k}</span>
                </label>
                {t && (
                  <div className="mt-2 grid gap-2 sm:grid-cols-2">
                    <Field id={`t-${m.id}-temp`} label={`Temperature for ${m.name}`} error={errors[`targets.${draft.targets.indexOf(t)}.temperature`]}>
                      <Input id={`t-${m.id}-temp`} type="number" min={0} max={2} step={0.1} value={t.temperature} onChange={(e) => setTarget(m.id, { temperature: Number(e.target.value) })} />
                    </Field>
                    <Field id={`t-${m.id}-max`} label={`Max tokens for ${m.name}`} error={errors[`targets.${draft.targets.indexOf(t)}.max_tokens`]}>
                      <Input id={`t-${m.id}-max`} type="number" min={1} max={100000} value={t.max_tokens} onChange={(e) => setTarget(m.id, { max_tokens: Number(e.target.value) })} />
                    </Field>
                  </div>
                )}
              </li>
            );
          })}
        </ul>
        {errors.targets && <p className="text-sm text-red-700" role="alert">{errors.targets}</p>}
      </fieldset>
      <details className="rounded-xl border border-zinc-200 p-3" open={draft.grid_temperatures.length > 0 || draft.grid_max_tokens.length > 0}>
        <summary className="cursor-pointer text-sm font-medium">Parameter grid (advanced)</summary>
        <div className="mt-3 grid gap-3 sm:grid-cols-2">
          <ListInput id="grid-temp" label="Temperatures" value={draft.grid_temperatures} onChange={(v) => update({ grid_temperatures: v })} error={errors.grid_temperatures} hint="e.g. 0.7, 1.0, 1.3 (empty: each model's own)" />
          <ListInput id="grid-max" label="Max tokens" value={draft.grid_max_tokens} onChange={(v) => update({ grid_max_tokens: v })} error={errors.grid_max_tokens} hint="e.g. 2048, 4096" />
        </div>
      </details>
      <p className="text-sm text-zinc-700" data-testid="grid-size">
        {draft.targets.length} model{draft.targets.length === 1 ? '' : 's'} × parameter combinations = {gridSize(draft)} target{gridSize(draft) === 1 ? '' : 's'} per case
      </p>
    </div>
  );
}
