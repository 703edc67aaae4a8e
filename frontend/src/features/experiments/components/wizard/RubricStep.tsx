import { Button, Field, Input, Select, Textarea, describedBy } from '@/components/ui';
import { cn } from '@/lib/cn';
import { SCALES, emptyCriterion, normalizeWeights, weightSum, type Criterion } from '../../lib/draft';
import { AssistPanel } from '../AssistPanel';
import type { StepProps } from './types';

/** FR-EC-002: 2–10 weighted criteria whose weights sum to 1 (± 0.01), each with a scale. */
export function RubricStep({ projectId, experimentId, draft, update, errors }: StepProps) {
  const rubric = draft.rubric;
  const set = (i: number, patch: Partial<Criterion>) => update({ rubric: rubric.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  const move = (i: number, by: number) => {
    const next = [...rubric];
    const [c] = next.splice(i, 1);
    next.splice(i + by, 0, c);
    update({ rubric: next });
  };
  const sum = weightSum(rubric);
  const sumOk = Math.abs(sum - 1) <= 0.01;
  return (
    <div className="space-y-4">
      <p className="text-sm text-zinc-600">Judges score every output on each criterion; the composite is their weighted mean.</p>
      <AssistPanel
        projectId={projectId}
        experimentId={experimentId}
        actions={[{ kind: 'rubric', path: 'rubric', label: 'Draft rubric from objective', input: { objective: draft.objective }, disabled: draft.objective.trim().length < 20 }]}
        onPickRubric={(criteria) => update({ rubric: criteria })}
      />
      <ol className="space-y-3" aria-label="Criteria">
        {rubric.map((c, i) => {
          const id = `crit-${i}`;
          const e = (f: string) => errors[`rubric.${i}.${f}`];
          return (
            <li key={i} className="space-y-3 rounded-xl border border-zinc-200 p-3">
              <div className="grid gap-3 sm:grid-cols-[1fr_7rem_8rem]">
                <Field id={`${id}-name`} label={`Criterion ${i + 1} name`} error={e('name')}>
                  <Input id={`${id}-name`} value={c.name} maxLength={50} onChange={(ev) => set(i, { name: ev.target.value })} invalid={!!e('name')} aria-describedby={describedBy(`${id}-name`, e('name'))} />
                </Field>
                <Field id={`${id}-weight`} label="Weight" error={e('weight')}>
                  <Input id={`${id}-weight`} type="number" min={0} max={1} step={0.05} value={c.weight} onChange={(ev) => set(i, { weight: Number(ev.target.value) })} invalid={!!e('weight')} />
                </Field>
                <Field id={`${id}-scale`} label="Scale">
                  <Select
                    id={`${id}-scale`}
                    className="w-full"
                    value={`${c.scale_min}-${c.scale_max}`}
                    onChange={(ev) => {
                      const [lo, hi] = ev.target.value.split('-').map(Number);
                      set(i, { scale_min: lo, scale_max: hi });
                    }}
                  >
                    {SCALES.map(([lo, hi]) => (
                      <option key={hi} value={`${lo}-${hi}`}>{`${lo}–${hi}`}</option>
                    ))}
                  </Select>
                </Field>
              </div>
              <Field id={`${id}-desc`} label="Description" error={e('description')}>
                <Textarea id={`${id}-desc`} rows={2} className="min-h-16" value={c.description} maxLength={500} onChange={(ev) => set(i, { description: ev.target.value })} invalid={!!e('description')} />
              </Field>
              <div className="flex flex-wrap gap-2">
                <Button size="sm" variant="ghost" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move criterion ${i + 1} up`}>
                  Move up
                </Button>
                <Button size="sm" variant="ghost" disabled={i === rubric.length - 1} onClick={() => move(i, 1)} aria-label={`Move criterion ${i + 1} down`}>
                  Move down
                </Button>
                <Button size="sm" variant="danger" disabled={rubric.length <= 2} onClick={() => update({ rubric: rubric.filter((_, j) => j !== i) })} aria-label={`Remove criterion ${i + 1}`}>
                  Remove
                </Button>
              </div>
            </li>
          );
        })}
      </ol>
      <div className="flex flex-wrap items-center gap-3">
        <Button variant="secondary" disabled={rubric.length >= 10} onClick={() => update({ rubric: [...rubric, emptyCriterion()] })}>
          + Add criterion
        </Button>
        <Button variant="secondary" onClick={() => update({ rubric: normalizeWeights(rubric) })}>
          Normalize weights
        </Button>
        <p className={cn('text-sm font-medium', sumOk ? 'text-emerald-700' : 'text-red-700')} aria-live="polite" data-testid="weight-sum">
          Total weight: {sum.toFixed(2)} {sumOk ? '✓' : '(must be 1.00)'}
        </p>
      </div>
      {errors.rubric && <p className="text-sm text-red-700" role="alert">{errors.rubric}</p>}
    </div>
  );
}
