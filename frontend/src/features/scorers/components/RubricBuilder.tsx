import { Button, describedBy, Field, Input, Select, Textarea } from '@/components/ui';
import { cn } from '@/lib/cn';
import { errorFor } from '../schema';
import { evenWeights, MAX_CRITERIA, MIN_CRITERIA, newCriterion, SCALES, scaleText, weightsBalanced, weightSum, type Criterion, type Rubric } from '../rubric';

interface RubricBuilderProps {
  value: Rubric;
  onChange: (next: Rubric) => void;
  /** Server field errors, flattened ("params.rubric.criteria[0].weight" -> message). */
  errors: Record<string, string>;
  disabled?: boolean;
}

/** Weighted criteria with a live weight sum that must reach 1 (±0.01), as the server checks. */
export function RubricBuilder({ value, onChange, errors, disabled }: RubricBuilderProps) {
  const criteria = value.criteria;
  const sum = weightSum(criteria);
  const balanced = weightsBalanced(criteria);
  const setCriteria = (next: Criterion[]) => onChange({ ...value, criteria: next });
  const update = (i: number, patch: Partial<Criterion>) => setCriteria(criteria.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  const rubricError = errors['params.rubric'] ?? errors['params.rubric.criteria'];

  return (
    <fieldset className="space-y-4 rounded-xl border border-zinc-200 p-4" aria-describedby="rubric-sum">
      <legend className="px-1 text-sm font-medium text-zinc-900">Rubric</legend>
      <p
        id="rubric-sum"
        role="status"
        className={cn('text-sm font-medium tabular-nums', balanced ? 'text-emerald-700' : 'text-red-700')}
        data-testid="weight-sum"
      >
        Weights sum to {sum.toFixed(2)} {balanced ? '✓' : '— they must sum to 1.00'}
      </p>
      {rubricError && <p className="text-sm text-red-700">{rubricError}</p>}
      <ol className="space-y-4">
        {criteria.map((c, i) => {
          const id = `criterion-${i}`;
          const err = (field: string) => errors[`params.rubric.criteria[${i}].${field}`];
          return (
            <li key={i} className="space-y-3 rounded-xl bg-zinc-50 p-3">
              <div className="grid gap-3 sm:grid-cols-[1fr_7rem_7rem]">
                <Field id={`${id}-name`} label={`Criterion ${i + 1} name`} error={err('name')}>
                  <Input
                    id={`${id}-name`}
                    value={c.name}
                    disabled={disabled}
                    invalid={!!err('name')}
                    aria-describedby={describedBy(`${id}-name`, err('name'))}
                    onChange={(e) => update(i, { name: e.target.value })}
                  />
                </Field>
                <Field id={`${id}-weight`} label="Weight" error={err('weight')}>
                  <Input
                    id={`${id}-weight`}
                    type="number"
                    inputMode="decimal"
                    step="0.05"
                    min={0}
                    max={1}
                    value={c.weight}
                    disabled={disabled}
                    invalid={!!err('weight')}
                    aria-describedby={describedBy(`${id}-weight`, err('weight'))}
                    onChange={(e) => {
                      const n = Number(e.target.value);
                      update(i, { weight: e.target.value.trim() !== '' && Number.isFinite(n) ? n : e.target.value });
                    }}
                  />
                </Field>
                <Field id={`${id}-scale`} label="Scale" error={err('scale')}>
                  <Select id={`${id}-scale`} className="w-full" value={scaleText(c.scale)} disabled={disabled} onChange={(e) => update(i, { scale: e.target.value })}>
                    {SCALES.map((s) => (
                      <option key={s} value={s}>
                        {s}
                      </option>
                    ))}
                  </Select>
                </Field>
              </div>
              <Field id={`${id}-description`} label="What the judge checks" error={err('description')} hint="10 to 500 characters.">
                <Textarea
                  id={`${id}-description`}
                  className="min-h-16"
                  value={c.description}
                  disabled={disabled}
                  invalid={!!err('description')}
                  aria-describedby={describedBy(`${id}-description`, err('description'), true)}
                  onChange={(e) => update(i, { description: e.target.value })}
                />
              </Field>
              <Button
                variant="ghost"
                size="sm"
                disabled={disabled || criteria.length <= MIN_CRITERIA}
                aria-label={`Remove criterion ${i + 1}`}
                onClick={() => setCriteria(criteria.filter((_, j) => j !== i))}
              >
                Remove
              </Button>
            </li>
          );
        })}
      </ol>
      <div className="flex flex-wrap gap-2">
        <Button variant="secondary" size="sm" disabled={disabled || criteria.length >= MAX_CRITERIA} onClick={() => setCriteria([...criteria, newCriterion()])}>
          Add criterion
        </Button>
        <Button variant="secondary" size="sm" disabled={disabled || criteria.length === 0} onClick={() => setCriteria(evenWeights(criteria))}>
          Split weights evenly
        </Button>
      </div>
      <Field id="rubric-goal" label={<>Goal <span className="font-normal text-zinc-500">(optional)</span></>} error={errorFor(errors, 'rubric.goal')}>
        <Textarea
          id="rubric-goal"
          className="min-h-16"
          value={value.goal ?? ''}
          disabled={disabled}
          onChange={(e) => {
            const { goal: _omit, ...rest } = value;
            onChange(e.target.value ? { ...rest, goal: e.target.value } : rest);
          }}
        />
      </Field>
    </fieldset>
  );
}
