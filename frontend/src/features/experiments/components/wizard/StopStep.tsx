import { Field, Input, describedBy } from '@/components/ui';
import type { StepProps } from './types';

const num = (v: string) => (v.trim() === '' ? NaN : Number(v));

/** FR-EC-007: when the loop stops, and the budget it may never exceed. */
export function StopStep({ draft, update, errors }: StepProps) {
  const f = (id: string, label: string, key: 'max_iterations' | 'convergence_window' | 'max_rejections', hint: string) => (
    <Field id={id} label={label} error={errors[key]} hint={hint}>
      <Input id={id} type="number" value={Number.isNaN(draft[key]) ? '' : draft[key]} onChange={(e) => update({ [key]: num(e.target.value) })} invalid={!!errors[key]} aria-describedby={describedBy(id, errors[key], true)} />
    </Field>
  );
  return (
    <div className="space-y-4">
      <div className="grid gap-4 sm:grid-cols-2">
        {f('stop-max-iter', 'Maximum iterations', 'max_iterations', 'Recommended: 5–15.')}
        {f('stop-window', 'Convergence window (iterations)', 'convergence_window', 'Stop when the gain stays below the minimum over this many iterations.')}
        <Field id="stop-delta" label="Minimum improvement (0–1)" error={errors.min_delta} hint={`${(draft.min_delta * 100).toFixed(1)}% of the composite.`}>
          <Input id="stop-delta" type="number" step={0.005} min={0} max={1} value={Number.isNaN(draft.min_delta) ? '' : draft.min_delta} onChange={(e) => update({ min_delta: num(e.target.value) })} invalid={!!errors.min_delta} />
        </Field>
        <Field id="stop-spend" label="Maximum spend ($)" error={errors.max_spend_dollars} hint="A hard cap over execution, judging and refinement.">
          <Input id="stop-spend" inputMode="decimal" value={draft.max_spend_dollars} onChange={(e) => update({ max_spend_dollars: e.target.value })} invalid={!!errors.max_spend_dollars} aria-describedby={describedBy('stop-spend', errors.max_spend_dollars, true)} />
        </Field>
        <Field id="stop-alert" label="Alert at (% of budget)" error={errors.budget_alert}>
          <Input id="stop-alert" type="number" min={50} max={100} value={Math.round(draft.budget_alert * 100)} onChange={(e) => update({ budget_alert: num(e.target.value) / 100 })} invalid={!!errors.budget_alert} />
        </Field>
        <Field id="stop-tokens" label="Maximum tokens (optional)" error={errors.max_tokens_total}>
          <Input id="stop-tokens" type="number" min={0} value={draft.max_tokens_total ?? ''} onChange={(e) => update({ max_tokens_total: e.target.value === '' ? null : num(e.target.value) })} invalid={!!errors.max_tokens_total} />
        </Field>
        {f('stop-rejections', 'Rejections in a row before stopping', 'max_rejections', 'The loop ends when reviewers reject this many suggestions in a row (1–20).')}
        <Field id="stop-holdout" label="Held-out share (%)" error={errors.holdout_fraction} hint="Cases the refiner never sees; the best version is chosen on them.">
          <Input id="stop-holdout" type="number" min={0} max={50} value={Math.round(draft.holdout_fraction * 100)} onChange={(e) => update({ holdout_fraction: num(e.target.value) / 100 })} invalid={!!errors.holdout_fraction} />
        </Field>
      </div>
      <p className="text-sm text-zinc-600">The loop also stops when the refiner has no suggestion: there is no new prompt to run.</p>
    </div>
  );
}
