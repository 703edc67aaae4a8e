import { Link } from 'react-router-dom';
import { Button, Checkbox, ErrorState, Label, LoadingRows } from '@/components/ui';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { focusRing } from '@/lib/cn';

export const MAX_JUDGES = 5;

interface JudgePickerProps {
  projectId: number;
  /** Judge refs as stored: model names (or ids) of the project. */
  value: string[];
  onChange: (next: string[]) => void;
  error?: string;
  disabled?: boolean;
}

/** Up to five of the project's models as judges. */
export function JudgePicker({ projectId, value, onChange, error, disabled }: JudgePickerProps) {
  const models = useModelConfigs(projectId, false);
  const items = models.data?.items ?? [];
  const known = new Set(items.flatMap((m) => [m.name, String(m.id)]));
  const full = value.length >= MAX_JUDGES;
  return (
    <fieldset className="space-y-2" aria-describedby={error ? 'judges-error' : 'judges-hint'}>
      <legend className="text-sm font-medium text-zinc-900">Judge models</legend>
      <p id="judges-hint" className="text-sm text-zinc-500">
        Pick 1 to {MAX_JUDGES}; each scores every output, and each call costs what the model charges. {value.length} chosen.
      </p>
      {models.isPending ? (
        <LoadingRows label="Loading models" />
      ) : models.isError ? (
        <ErrorState title="Could not load the models" error={models.error} onRetry={() => models.refetch()} retrying={models.isFetching} />
      ) : items.length === 0 ? (
        <p className="text-sm text-zinc-600">
          No models yet.{' '}
          <Link to={`/projects/${projectId}/models`} className={`rounded-xl text-indigo-700 underline ${focusRing}`}>
            Add a model
          </Link>{' '}
          to judge with.
        </p>
      ) : (
        <ul className="grid gap-2 sm:grid-cols-2">
          {items.map((m) => {
            const checked = value.includes(m.name) || value.includes(String(m.id));
            const id = `judge-${m.id}`;
            return (
              <li key={m.id} className="flex min-w-0 items-center gap-2">
                <Checkbox
                  id={id}
                  checked={checked}
                  disabled={disabled || (!checked && full)}
                  onChange={(e) =>
                    onChange(e.target.checked ? [...value, m.name] : value.filter((v) => v !== m.name && v !== String(m.id)))
                  }
                />
                <Label htmlFor={id} className="min-w-0 break-words font-normal">
                  {m.name} <span className="text-zinc-500">({m.model})</span>
                </Label>
              </li>
            );
          })}
        </ul>
      )}
      {value
        .filter((v) => models.isSuccess && !known.has(v))
        .map((v) => (
          <p key={v} className="flex flex-wrap items-center gap-2 text-sm text-amber-800">
            “{v}” is not a model of this project.
            <Button variant="ghost" size="sm" disabled={disabled} onClick={() => onChange(value.filter((x) => x !== v))}>
              Remove {v}
            </Button>
          </p>
        ))}
      {error && (
        <p id="judges-error" className="text-sm text-red-700">
          {error}
        </p>
      )}
    </fieldset>
  );
}
