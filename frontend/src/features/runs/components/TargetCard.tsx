import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Button, Field, Input, Label, Select } from '@/components/ui';
import type { ModelConfig } from '@/api/providerTypes';
import { paramRules, PARAM_LABELS, type ParamName } from '@/features/models/params';
import { shortKindLabel } from '@/features/providers/kinds';
import { formatPricePerMtok } from '@/lib/money';
import { cn, focusRing } from '@/lib/cn';
import type { Prompt } from '../api';
import { usePromptVersions } from '../hooks/useRuns';
import { combinations, GRID_PARAMS, nextKey, parseGridValues, type FormErrors, type GridRow, type TargetForm } from '../config';

const OVERRIDES: ParamName[] = ['temperature', 'max_tokens', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed'];

function modelDefault(model: ModelConfig, name: ParamName): string {
  const v = (model.params as Record<string, unknown> | null | undefined)?.[name];
  return v === undefined || v === null ? '' : String(v);
}

/** One model of the run: parameter overrides, a parameter grid and the prompt version. */
export function TargetCard({
  projectId,
  model,
  target,
  prompts,
  promptRequired,
  errors,
  onChange,
  onRemove,
}: {
  projectId: number;
  model: ModelConfig;
  target: TargetForm;
  prompts: Prompt[];
  promptRequired: boolean;
  errors: FormErrors;
  onChange: (t: TargetForm) => void;
  onRemove: () => void;
}) {
  const [open, setOpen] = useState(false);
  const rules = paramRules(model.provider);
  const id = `target-${target.key}`;
  const combos = combinations(target);
  const versions = usePromptVersions(projectId, target.promptId);
  const paramErrors = OVERRIDES.filter((n) => errors[`${target.key}.${n}`]);
  const overrides = OVERRIDES.filter((n) => target.params[n].trim() !== '').length;

  const addRow = (param: ParamName) => {
    const used = new Set(target.grid.map((r) => r.param));
    const p = used.has(param) ? (GRID_PARAMS.find((g) => !used.has(g.name))?.name ?? param) : param;
    const row: GridRow = { key: nextKey('g'), param: p, values: '' };
    onChange({ ...target, grid: [...target.grid, row] });
  };
  const setRow = (key: string, patch: Partial<GridRow>) =>
    onChange({ ...target, grid: target.grid.map((r) => (r.key === key ? { ...r, ...patch } : r)) });

  return (
    <li className="space-y-3 rounded-xl border border-zinc-200 p-4" aria-label={`Target ${model.name}`}>
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div>
          <p className="text-base font-semibold text-zinc-900">{model.name}</p>
          <p className="text-sm text-zinc-500">
            {shortKindLabel(undefined, model.provider)} · {model.model} ·{' '}
            {model.priced
              ? `${formatPricePerMtok(model.input_price_per_mtok_micros)} in / ${formatPricePerMtok(model.output_price_per_mtok_micros)} out per 1M tokens`
              : 'unpriced'}
          </p>
        </div>
        <div className="flex items-center gap-2">
          {combos > 1 && (
            <span className="text-sm text-zinc-600" data-testid={`combos-${model.id}`}>
              {combos} combinations
            </span>
          )}
          <Button variant="ghost" size="sm" aria-label={`Remove ${model.name}`} onClick={onRemove}>
            <span aria-hidden="true">✕</span>
          </Button>
        </div>
      </div>

      <div className="grid gap-3 sm:grid-cols-2">
        <Field id={`${id}-prompt`} label={promptRequired ? 'Prompt (required)' : 'Prompt (optional)'} hint={<Link to={`/projects/${projectId}/prompts`} className={cn('rounded-xl text-indigo-700 hover:underline', focusRing)}>Write or edit prompts</Link>}>
          <Select
            id={`${id}-prompt`}
            className="w-full"
            value={target.promptId ?? ''}
            onChange={(e) => {
              const prompt = prompts.find((p) => p.id === Number(e.target.value));
              // A chosen prompt starts at its newest version.
              onChange({ ...target, promptId: prompt?.id ?? null, promptVersionId: prompt?.latest?.id ?? null });
            }}
          >
            <option value="">{prompts.length === 0 ? 'No prompts in this project' : 'No prompt'}</option>
            {prompts.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </Select>
        </Field>
        <Field id={`${id}-version`} label="Prompt version">
          <Select
            id={`${id}-version`}
            className="w-full"
            disabled={target.promptId === null || versions.isPending}
            value={target.promptVersionId ?? ''}
            onChange={(e) => onChange({ ...target, promptVersionId: e.target.value ? Number(e.target.value) : null })}
          >
            <option value="">{target.promptId === null ? 'Choose a prompt first' : 'Choose a version'}</option>
            {versions.data?.map((v) => (
              <option key={v.id} value={v.id}>
                v{v.number}
                {v.note ? ` – ${v.note}` : ''}
              </option>
            ))}
          </Select>
        </Field>
      </div>

      <button
        type="button"
        aria-expanded={open || paramErrors.length > 0}
        aria-controls={`${id}-params`}
        onClick={() => setOpen((o) => !o)}
        className={cn('rounded-xl text-sm font-medium text-indigo-600 hover:text-indigo-700', focusRing)}
      >
        {open || paramErrors.length > 0 ? '▾' : '▸'} Parameters for {model.name}
        {overrides > 0 && <span className="text-zinc-500"> ({overrides} overridden)</span>}
      </button>
      {(open || paramErrors.length > 0) && (
        <div id={`${id}-params`} className="grid gap-3 sm:grid-cols-3">
          {OVERRIDES.map((name) => {
            const err = errors[`${target.key}.${name}`];
            const fid = `${id}-${name}`;
            const def = modelDefault(model, name);
            return (
              <Field key={name} id={fid} label={PARAM_LABELS[name]} error={err} hint={rules[name].hint}>
                <Input
                  id={fid}
                  inputMode="decimal"
                  value={target.params[name]}
                  placeholder={def ? `Model default: ${def}` : 'Model default'}
                  invalid={!!err}
                  aria-describedby={err ? `${fid}-error` : `${fid}-hint`}
                  onChange={(e) => onChange({ ...target, params: { ...target.params, [name]: e.target.value } })}
                />
              </Field>
            );
          })}
        </div>
      )}

      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-zinc-900">Parameter grid</legend>
        {target.grid.length === 0 && (
          <p className="text-sm text-zinc-500">Each combination of values runs as its own target.</p>
        )}
        {target.grid.map((row) => {
          const err = errors[row.key];
          const parsed = parseGridValues(row.param, row.values);
          const rid = `${id}-${row.key}`;
          return (
            <div key={row.key} className="flex flex-wrap items-start gap-2">
              <div>
                <Label htmlFor={`${rid}-param`} className="sr-only">
                  Varied parameter
                </Label>
                <Select id={`${rid}-param`} value={row.param} onChange={(e) => setRow(row.key, { param: e.target.value as ParamName })}>
                  {GRID_PARAMS.map((g) => (
                    <option key={g.name} value={g.name}>
                      {PARAM_LABELS[g.name]}
                    </option>
                  ))}
                </Select>
              </div>
              <div className="min-w-48 flex-1 space-y-1">
                <Label htmlFor={`${rid}-values`} className="sr-only">
                  {PARAM_LABELS[row.param]} values for {model.name}
                </Label>
                <Input
                  id={`${rid}-values`}
                  value={row.values}
                  placeholder="Comma-separated, e.g. 0.2, 0.7, 1.0"
                  invalid={!!err}
                  aria-describedby={err ? `${rid}-error` : undefined}
                  onChange={(e) => setRow(row.key, { values: e.target.value })}
                />
                {err ? (
                  <p id={`${rid}-error`} className="text-sm text-red-700">
                    {err}
                  </p>
                ) : (
                  parsed.ok && <p className="text-sm text-zinc-500">{parsed.values.length} values</p>
                )}
              </div>
              <Button
                variant="ghost"
                size="sm"
                className="mt-1"
                aria-label={`Remove the ${PARAM_LABELS[row.param].toLowerCase()} variation of ${model.name}`}
                onClick={() => onChange({ ...target, grid: target.grid.filter((r) => r.key !== row.key) })}
              >
                <span aria-hidden="true">✕</span>
              </Button>
            </div>
          );
        })}
        <div className="flex flex-wrap gap-2">
          <Button variant="secondary" size="sm" onClick={() => addRow('temperature')} aria-label={`Add temperature variation for ${model.name}`}>
            + Add temperature variation
          </Button>
          <Button variant="secondary" size="sm" onClick={() => addRow('max_tokens')} aria-label={`Add max tokens variation for ${model.name}`}>
            + Add max tokens variation
          </Button>
        </div>
      </fieldset>
    </li>
  );
}
