import { Checkbox, Field, Select, Skeleton } from '@/components/ui';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import type { StepProps } from './types';

/** FR-EC-006: pointwise rubric judges, optional pairwise vs the previous iteration, safety checks. */
export function JudgesStep({ projectId, draft, update, errors }: StepProps) {
  const models = useModelConfigs(projectId, false);
  const toggle = (id: number) =>
    update({ judge_model_ids: draft.judge_model_ids.includes(id) ? draft.judge_model_ids.filter((x) => x !== id) : [...draft.judge_model_ids, id] });
  return (
    <div className="space-y-5">
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-zinc-900">Rubric judges (pointwise, temperature 0)</legend>
        {models.isPending && <Skeleton className="h-16 w-full" />}
        {models.data?.items.length === 0 && <p className="text-sm text-zinc-600">Add a model on the Models tab first.</p>}
        {models.data?.items.map((m) => (
          <label key={m.id} className="flex items-center gap-2 text-sm">
            <Checkbox checked={draft.judge_model_ids.includes(m.id)} onChange={() => toggle(m.id)} />
            <span className="min-w-0 break-words">Judge with {m.name}</span>
          </label>
        ))}
        {errors.judge_model_ids && <p className="text-sm text-red-700" role="alert">{errors.judge_model_ids}</p>}
      </fieldset>
      {models.data && models.data.items.length > 0 && (
        <Field id="judge-refiner" label="Refiner model" hint="Proposes the diff after each iteration; its calls count against the budget.">
          <Select id="judge-refiner" className="w-full" value={draft.refiner_id ?? ''} onChange={(e) => update({ refiner_id: e.target.value ? Number(e.target.value) : null })}>
            <option value="">The first judge</option>
            {models.data.items.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </Select>
        </Field>
      )}
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-zinc-900">Comparison and safety</legend>
        <label className="flex items-center gap-2 text-sm">
          <Checkbox checked={draft.pairwise} onChange={(e) => update({ pairwise: e.target.checked })} />
          Pairwise judge vs the previous iteration (both orders)
        </label>
        <label className="flex items-center gap-2 text-sm">
          <Checkbox checked={draft.safety_pii} onChange={(e) => update({ safety_pii: e.target.checked })} />
          PII check
        </label>
        <label className="flex items-center gap-2 text-sm">
          <Checkbox checked={draft.safety_jailbreak} onChange={(e) => update({ safety_jailbreak: e.target.checked })} />
          Jailbreak check
        </label>
      </fieldset>
    </div>
  );
}
