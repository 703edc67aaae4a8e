import { useState, type ReactNode } from 'react';
import { Checkbox, describedBy, Field, Input, Label, Select, Textarea } from '@/components/ui';
import { controlFor, errorFor, labelOf, type JsonSchema } from '../schema';

type Params = Record<string, unknown>;

interface SchemaFormProps {
  schema: JsonSchema;
  value: Params;
  onChange: (next: Params) => void;
  /** Server field errors, flattened ("params.threshold" -> message). */
  errors: Record<string, string>;
  /** Properties drawn by a specialised editor instead of the generic control. */
  custom?: Record<string, ReactNode>;
  /** Properties not shown (e.g. criteria of a manual scorer not rated per criterion). */
  hidden?: string[];
  idPrefix?: string;
  disabled?: boolean;
}

/** A form for a scorer kind's params, built from the JSON Schema the server validates with. */
export function SchemaForm({ schema, value, onChange, errors, custom = {}, hidden = [], idPrefix = 'param', disabled }: SchemaFormProps) {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {}).filter(([name]) => !hidden.includes(name));
  if (entries.length === 0) return <p className="text-sm text-zinc-600">This kind has no settings.</p>;
  const set = (name: string, next: unknown) => {
    const copy = { ...value };
    if (next === undefined) delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  return (
    <div className="space-y-4">
      {entries.map(([name, prop]) =>
        name in custom ? (
          <div key={name}>{custom[name]}</div>
        ) : (
          <SchemaField
            key={name}
            id={`${idPrefix}-${name}`}
            name={name}
            schema={prop}
            required={required.has(name)}
            value={value[name]}
            error={errorFor(errors, name)}
            onChange={(next) => set(name, next)}
            disabled={disabled}
          />
        ),
      )}
    </div>
  );
}

interface FieldProps {
  id: string;
  name: string;
  schema: JsonSchema;
  required: boolean;
  value: unknown;
  error?: string;
  onChange: (next: unknown) => void;
  disabled?: boolean;
}

const asText = (v: unknown) => (v === undefined || v === null ? '' : String(v));

/** Text as typed stays in the field; the params get the parsed value (or the text, for the server to refuse). */
function initialRaw(control: ReturnType<typeof controlFor>, value: unknown): string {
  if (control.kind === 'lines') return Array.isArray(value) ? value.join('\n') : '';
  if (control.kind === 'json') return value === undefined ? '' : JSON.stringify(value, null, 2);
  return asText(value);
}

export function SchemaField({ id, name, schema, required, value, error, onChange, disabled }: FieldProps) {
  const control = controlFor(schema);
  const [raw, setRaw] = useState(() => initialRaw(control, value));
  const [jsonProblem, setJsonProblem] = useState<string | null>(null);
  const label = (
    <>
      {labelOf(name)}
      {!required && <span className="font-normal text-zinc-500"> (optional)</span>}
    </>
  );
  const hint = schema.description;
  const shown = error ?? jsonProblem ?? undefined;
  const common = { id, disabled, 'aria-describedby': describedBy(id, shown, !!hint), invalid: !!shown };

  if (control.kind === 'boolean') {
    return (
      <div className="space-y-1">
        <div className="flex items-center gap-2">
          <Checkbox id={id} checked={value === true} disabled={disabled} aria-describedby={describedBy(id, shown, !!hint)} onChange={(e) => onChange(e.target.checked)} />
          <Label htmlFor={id} className="font-normal">
            {labelOf(name)}
          </Label>
        </div>
        {hint && !shown && <p id={`${id}-hint`} className="text-sm text-zinc-500">{hint}</p>}
        {shown && <p id={`${id}-error`} className="text-sm text-red-700">{shown}</p>}
      </div>
    );
  }
  if (control.kind === 'checkboxes') {
    const chosen = Array.isArray(value) ? (value as string[]) : [];
    return (
      <fieldset className="space-y-2" aria-describedby={describedBy(id, shown, !!hint)}>
        <legend className="text-sm font-medium text-zinc-900">{label}</legend>
        <div className="flex flex-wrap gap-4">
          {control.options.map((option) => (
            <div key={option} className="flex items-center gap-2">
              <Checkbox
                id={`${id}-${option}`}
                checked={chosen.includes(option)}
                disabled={disabled}
                onChange={(e) => {
                  const next = e.target.checked ? [...chosen, option] : chosen.filter((c) => c !== option);
                  onChange(next);
                }}
              />
              <Label htmlFor={`${id}-${option}`} className="font-normal">
                {option}
              </Label>
            </div>
          ))}
        </div>
        {hint && !shown && <p id={`${id}-hint`} className="text-sm text-zinc-500">{hint}</p>}
        {shown && <p id={`${id}-error`} className="text-sm text-red-700">{shown}</p>}
      </fieldset>
    );
  }
  return (
    <Field id={id} label={label} error={shown} hint={hint}>
      {control.kind === 'select' ? (
        <Select
          id={id}
          className="w-full"
          value={asText(value)}
          disabled={disabled}
          aria-describedby={common['aria-describedby']}
          onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
        >
          {(!required || value === undefined) && <option value="">{required ? 'Choose…' : 'Default'}</option>}
          {control.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </Select>
      ) : control.kind === 'number' ? (
        <Input
          {...common}
          type="number"
          inputMode={control.integer ? 'numeric' : 'decimal'}
          step={control.integer ? 1 : 'any'}
          min={schema.minimum}
          max={schema.maximum}
          value={raw}
          onChange={(e) => {
            setRaw(e.target.value);
            const n = Number(e.target.value);
            onChange(e.target.value.trim() === '' ? undefined : Number.isFinite(n) ? n : e.target.value);
          }}
        />
      ) : control.kind === 'text' && !control.multiline ? (
        <Input {...common} value={asText(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)} />
      ) : (
        <Textarea
          {...common}
          className={control.kind === 'json' ? 'font-mono' : undefined}
          value={control.kind === 'text' ? asText(value) : raw}
          placeholder={control.kind === 'lines' ? 'One per line' : undefined}
          onChange={(e) => {
            const text = e.target.value;
            setRaw(text);
            if (control.kind === 'text') onChange(text === '' ? undefined : text);
            else if (control.kind === 'lines') {
              const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
              onChange(lines.length ? lines : undefined);
            } else if (text.trim() === '') {
              setJsonProblem(null);
              onChange(undefined);
            } else {
              try {
                onChange(JSON.parse(text));
                setJsonProblem(null);
              } catch {
                setJsonProblem('Not valid JSON yet.');
              }
            }
          }}
        />
      )}
    </Field>
  );
}
