import { isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Alert, Button, Checkbox, describedBy, Dialog, ErrorState, Field, Input, Label, LoadingRows, Select } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError } from '@/api/errors';
import type { Credential, CredentialUpdateBody, ProviderKind, ProviderKindName } from '@/api/providerTypes';
import { cn, focusRing } from '@/lib/cn';
import { useFocusFirstInvalid } from '@/lib/useFocusFirstInvalid';
import { useCreateCredential, useProviderKinds, useUpdateCredential } from '../hooks/useCredentials';
import { baseUrlHint, baseUrlLabel, configFields, keyMode, kindDescription, type KeyMode } from '../kinds';

export type KeySourceChoice = 'stored' | 'env' | 'none';

export interface CredentialForm {
  kind: string;
  label: string;
  baseUrl: string;
  keySource: KeySourceChoice;
  apiKey: string;
  secretEnv: string;
  config: Record<string, string>;
  /** Calls in flight on this key over every run and worker: '' for no ceiling. */
  ceiling: string;
  isDefault: boolean;
}

type Errors = Partial<Record<string, string>>;

/** "Endpoint" → "endpoint", but "API version" stays. */
const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);

const ENV_RE = /^[A-Z_][A-Z0-9_]*$/;

/** Per-minute limits every kind accepts, shared by every worker (the server's maxima). */
export const LIMIT_FIELDS = [
  {
    name: 'rpm_limit',
    label: 'Requests per minute (optional)',
    max: 1_000_000,
    hint: 'Per model, across all workers. Empty: no limit.',
  },
  {
    name: 'tpm_limit',
    label: 'Tokens per minute (optional)',
    max: 1_000_000_000,
    hint: 'Per model: prompt plus max output tokens of each call. Empty: no limit.',
  },
] as const;

const isLimit = (name: string) => LIMIT_FIELDS.some((f) => f.name === name);

/** The credential's concurrency ceiling: the server's maximum. */
export const CEILING_MAX = 1000;

/** A limit as typed: '' when empty, else a whole number within 1..max, or an error. */
export function limitError(value: string, max: number): string | null {
  const v = value.trim();
  if (!v) return null;
  if (!/^\d+$/.test(v) || Number(v) < 1) return 'Enter a whole number of at least 1, or leave it empty.';
  if (Number(v) > max) return `At most ${max.toLocaleString('en-US')}.`;
  return null;
}

function defaultKeySource(mode: KeyMode): KeySourceChoice {
  return mode === 'none' ? 'none' : 'stored';
}

export function formFromCredential(c: Credential): CredentialForm {
  return {
    kind: c.kind,
    label: c.label,
    baseUrl: c.base_url ?? '',
    keySource: c.key_source,
    apiKey: '',
    secretEnv: c.secret_env ?? '',
    config: Object.fromEntries(Object.entries(c.config ?? {}).map(([k, v]) => [k, v == null ? '' : String(v)])),
    ceiling: c.concurrency_ceiling == null ? '' : String(c.concurrency_ceiling),
    isDefault: c.is_default,
  };
}

const emptyForm: CredentialForm = {
  kind: '',
  label: '',
  baseUrl: '',
  keySource: 'stored',
  apiKey: '',
  secretEnv: '',
  config: {},
  ceiling: '',
  isDefault: false,
};

/** Client-side checks; the server validates again and its answer wins. */
export function validateCredential(f: CredentialForm, kind: ProviderKind | undefined, editing: Credential | null): Errors {
  const errors: Errors = {};
  if (!f.kind) errors.kind = 'Choose a provider.';
  const label = f.label.trim();
  if (!label) errors.label = 'Give it a label, such as "OpenAI – Production".';
  else if (label.length > 100) errors.label = 'The label must be at most 100 characters.';
  const url = f.baseUrl.trim();
  if (!url && !kind?.default_base_url) errors.base_url = `Enter the ${lowerFirst(baseUrlLabel(f.kind))}.`;
  else if (url && !/^https?:\/\/[^\s/]+/i.test(url)) errors.base_url = 'Use an http:// or https:// address.';
  const mode = keyMode(kind);
  if (mode !== 'none') {
    if (f.keySource === 'stored' && mode === 'required' && !f.apiKey.trim()) {
      const keeps = editing?.key_source === 'stored';
      if (!keeps) errors.api_key = 'Enter the API key.';
    }
    if (f.keySource === 'env') {
      if (!f.secretEnv.trim()) errors.secret_env = 'Enter the environment variable’s name.';
      else if (!ENV_RE.test(f.secretEnv.trim())) errors.secret_env = 'Use capital letters, digits and _, not starting with a digit.';
      else if (f.secretEnv.trim().startsWith('ASSAY_'))
        errors.secret_env = 'ASSAY_ variables are Assay’s own settings, never a provider key.';
    }
    if (f.keySource === 'none' && mode === 'required') errors.api_key = 'This provider needs a key.';
  }
  for (const field of configFields(kind)) {
    if (field.required && !(f.config[field.name] ?? '').trim()) errors[`config.${field.name}`] = `Enter the ${lowerFirst(field.label)}.`;
  }
  for (const field of LIMIT_FIELDS) {
    const problem = limitError(f.config[field.name] ?? '', field.max);
    if (problem) errors[`config.${field.name}`] = problem;
  }
  const ceiling = limitError(f.ceiling, CEILING_MAX);
  if (ceiling) errors.concurrency_ceiling = ceiling;
  return errors;
}

/**
 * The request body: only what the form means to set. The key is sent only when typed
 * (a PATCH without api_key keeps the stored one); settings the form does not show
 * (max_concurrency, headers...) are kept, since a PATCH's config replaces the whole config.
 * The rate limits are numbers; an emptied one is removed. The ceiling is sent when it
 * changed (null: none).
 */
export function credentialBody(f: CredentialForm, kind: ProviderKind | undefined, editing: Credential | null): CredentialUpdateBody {
  const shown = configFields(kind);
  const config: Record<string, unknown> = {};
  if (editing) {
    for (const [k, v] of Object.entries(editing.config ?? {})) {
      if (!shown.some((field) => field.name === k) && !isLimit(k)) config[k] = v;
    }
  }
  for (const field of shown) {
    const v = (f.config[field.name] ?? '').trim();
    if (v) config[field.name] = v;
  }
  for (const field of LIMIT_FIELDS) {
    const v = (f.config[field.name] ?? '').trim();
    if (v) config[field.name] = Number(v);
  }
  const body: CredentialUpdateBody = {
    label: f.label.trim(),
    base_url: f.baseUrl.trim() || null,
    config,
  };
  if (!editing) body.is_default = f.isDefault;
  const ceiling = f.ceiling.trim() ? Number(f.ceiling.trim()) : null;
  if (ceiling !== (editing?.concurrency_ceiling ?? null)) body.concurrency_ceiling = ceiling;
  const mode = keyMode(kind);
  if (mode === 'none') return body;
  if (f.keySource === 'stored') {
    if (f.apiKey.trim()) body.api_key = f.apiKey.trim();
    if (editing && editing.key_source === 'env') body.secret_env = null;
  } else if (f.keySource === 'env') {
    body.secret_env = f.secretEnv.trim();
    if (editing && editing.key_source === 'stored') body.api_key = null;
  } else if (editing && editing.key_source !== 'none') {
    body.api_key = null;
    body.secret_env = null;
  }
  return body;
}

/** Server field errors (webargs paths) onto the form's names. */
function serverFieldErrors(err: unknown): Errors {
  const out: Errors = {};
  for (const [k, v] of Object.entries(fieldErrors(err))) out[k.replace(/^json\./, '')] = v;
  if (isApiError(err) && err.code === 'DUPLICATE_LABEL' && !out.label) out.label = err.message;
  return out;
}

const KNOWN_FIELDS = ['kind', 'label', 'base_url', 'api_key', 'secret_env', 'concurrency_ceiling'];

function isPlaced(key: string, fields: Array<{ name: string }>) {
  return KNOWN_FIELDS.includes(key) || [...fields, ...LIMIT_FIELDS].some((f) => key === `config.${f.name}`);
}

export function CredentialDialog({
  projectId,
  open,
  onClose,
  editing,
}: {
  projectId: number;
  open: boolean;
  onClose: () => void;
  editing: Credential | null;
}) {
  return open ? <CredentialDialogBody projectId={projectId} onClose={onClose} editing={editing} /> : null;
}

function CredentialDialogBody({ projectId, onClose, editing: initial }: { projectId: number; onClose: () => void; editing: Credential | null }) {
  const kinds = useProviderKinds();
  const create = useCreateCredential(projectId);
  const queryClient = useQueryClient();
  const update = useUpdateCredential(projectId);
  const [editing, setEditing] = useState<Credential | null>(initial);
  const [form, setForm] = useState<CredentialForm>(initial ? formFromCredential(initial) : emptyForm);
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const { ref: formRef, focusFirstInvalid } = useFocusFirstInvalid<HTMLFormElement>();
  const [saved, setSaved] = useState<Credential | null>(null);

  const kind = kinds.data?.find((k) => k.kind === form.kind);
  const mode = keyMode(kind);
  const fields = configFields(kind);
  const errors: Errors = { ...serverErrors, ...(submitted ? validateCredential(form, kind, editing) : {}) };
  const pending = create.isPending || update.isPending;

  function set<K extends keyof CredentialForm>(key: K, value: CredentialForm[K], errorKey: string = key) {
    setForm((f) => ({ ...f, [key]: value }));
    setServerErrors((s) => ({ ...s, [errorKey]: undefined }));
  }

  function chooseKind(next: string) {
    const k = kinds.data?.find((x) => x.kind === next);
    setForm((f) => ({
      ...f,
      kind: next,
      baseUrl: k?.default_base_url ?? '',
      config: {},
      keySource: defaultKeySource(keyMode(k)),
      apiKey: '',
      secretEnv: '',
    }));
    setServerErrors({});
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSubmitted(true);
    setServerErrors({});
    setFormError(null);
    if (Object.keys(validateCredential(form, kind, editing)).length > 0) return focusFirstInvalid();
    const body = credentialBody(form, kind, editing);
    const handlers = {
      onSuccess: (c: Credential) => {
        // An edit that left the address, key and settings alone is not tested again: nothing to report.
        if (editing && c.last_tested_at === editing.last_tested_at) onClose();
        else setSaved(c);
      },
      onError: (err: unknown) => {
        if (isStaleWrite(err)) return; // StaleWriteNotice says it; the form keeps what was typed
        const fe = serverFieldErrors(err);
        setServerErrors(fe);
        focusFirstInvalid();
        const unplaced = Object.keys(fe).filter((k) => !isPlaced(k, fields));
        if (Object.keys(fe).length === 0) setFormError(errorMessage(err));
        else if (unplaced.length > 0) setFormError([errorMessage(err), ...unplaced.map((k) => `${k}: ${fe[k]}`)].join(' '));
      },
    };
    if (editing) update.mutate({ id: editing.id, body, version: editing.row_version }, handlers);
    else create.mutate({ ...body, kind: form.kind as ProviderKindName, label: body.label ?? '' }, handlers);
  }

  function editSaved() {
    if (!saved) return;
    setEditing(saved);
    setForm(formFromCredential(saved));
    setSaved(null);
    setSubmitted(false);
    create.reset();
    update.reset();
  }

  const title = saved ? (editing ? 'Provider updated' : 'Provider added') : editing ? 'Edit provider' : 'Add provider';

  if (saved) {
    return (
      <Dialog
        key="result"
        open
        onClose={onClose}
        title={title}
        footer={
          <>
            {saved.last_test_ok === false && (
              <Button variant="secondary" onClick={editSaved}>
                Edit provider
              </Button>
            )}
            <Button data-autofocus onClick={onClose}>
              Done
            </Button>
          </>
        }
      >
        <div data-testid="save-result" className="space-y-3">
          {saved.last_test_ok === true ? (
            <Alert tone="success">“{saved.label}” saved. Connection test passed.</Alert>
          ) : saved.last_test_ok === false ? (
            <Alert>
              <p className="font-medium">“{saved.label}” saved, but the connection test failed.</p>
              {saved.last_test_error && <p className="mt-1 break-words">{saved.last_test_error}</p>}
            </Alert>
          ) : (
            <Alert tone="info">“{saved.label}” saved. It has not been tested yet.</Alert>
          )}
          {saved.last_test_ok === false && (
            <p className="text-sm text-zinc-600">
              Models cannot call it until the test passes. Fix the address or key with Edit, then Test again.
            </p>
          )}
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog
      key="form"
      open
      onClose={onClose}
      title={title}
      description={
        editing
          ? 'The key is never shown: leave it empty to keep the current one. Changing the address, key or settings tests the connection again.'
          : 'Assay tests the connection when you save; a failed test still saves the provider.'
      }
    >
      {kinds.isPending ? (
        <LoadingRows label="Loading provider kinds" />
      ) : kinds.isError ? (
        <ErrorState title="Could not load provider kinds" error={kinds.error} onRetry={() => kinds.refetch()} retrying={kinds.isFetching} />
      ) : (
        <form ref={formRef} noValidate onSubmit={onSubmit} className="space-y-4">
          <StaleWriteNotice
            error={update.error}
            onReload={() => {
              update.reset();
              void queryClient.invalidateQueries({ queryKey: qk.credentials(projectId) });
            }}
          />
          {formError && <Alert>{formError}</Alert>}
          <Field id="cred-kind" label="Provider" error={errors.kind} hint={kindDescription(kinds.data, form.kind)}>
            <Select
              id="cred-kind"
              className="w-full"
              value={form.kind}
              disabled={!!editing}
              data-autofocus={!editing || undefined}
              onChange={(e) => chooseKind(e.target.value)}
              aria-invalid={!!errors.kind || undefined}
              aria-describedby={describedBy('cred-kind', errors.kind, !!kindDescription(kinds.data, form.kind))}
            >
              <option value="">Choose a provider</option>
              {kinds.data.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.label}
                </option>
              ))}
            </Select>
          </Field>
          {form.kind && (
            <>
              <Field id="cred-label" label="Label" error={errors.label} hint="Unique in this project, e.g. “OpenAI – Production”.">
                <Input
                  id="cred-label"
                  data-autofocus={editing ? true : undefined}
                  value={form.label}
                  maxLength={100}
                  onChange={(e) => set('label', e.target.value)}
                  invalid={!!errors.label}
                  aria-describedby={describedBy('cred-label', errors.label, true)}
                />
              </Field>
              <Field id="cred-base-url" label={baseUrlLabel(form.kind)} error={errors.base_url} hint={baseUrlHint(kind) || undefined}>
                <Input
                  id="cred-base-url"
                  type="url"
                  inputMode="url"
                  autoComplete="off"
                  spellCheck={false}
                  value={form.baseUrl}
                  placeholder={kind?.default_base_url ?? 'https://'}
                  onChange={(e) => set('baseUrl', e.target.value, 'base_url')}
                  invalid={!!errors.base_url}
                  aria-describedby={describedBy('cred-base-url', errors.base_url, !!baseUrlHint(kind))}
                />
              </Field>
              {fields.map((field) => {
                const id = `cred-config-${field.name}`;
                const key = `config.${field.name}`;
                return (
                  <Field
                    key={field.name}
                    id={id}
                    label={field.required ? field.label : `${field.label} (optional)`}
                    error={errors[key]}
                    hint={field.help ?? undefined}
                  >
                    <Input
                      id={id}
                      value={form.config[field.name] ?? ''}
                      placeholder={field.placeholder ?? undefined}
                      autoComplete="off"
                      onChange={(e) => {
                        const v = e.target.value;
                        setForm((f) => ({ ...f, config: { ...f.config, [field.name]: v } }));
                        setServerErrors((s) => ({ ...s, [key]: undefined }));
                      }}
                      invalid={!!errors[key]}
                      aria-describedby={describedBy(id, errors[key], !!field.help)}
                    />
                  </Field>
                );
              })}
              <fieldset className="space-y-3">
                <legend className="text-sm font-medium text-zinc-900">Rate limits</legend>
                <div className="grid gap-4 sm:grid-cols-2">
                  {LIMIT_FIELDS.map((field) => {
                    const id = `cred-config-${field.name}`;
                    const key = `config.${field.name}`;
                    return (
                      <Field key={field.name} id={id} label={field.label} error={errors[key]} hint={field.hint}>
                        <Input
                          id={id}
                          type="number"
                          inputMode="numeric"
                          min={1}
                          max={field.max}
                          step={1}
                          value={form.config[field.name] ?? ''}
                          autoComplete="off"
                          onChange={(e) => {
                            const v = e.target.value;
                            setForm((f) => ({ ...f, config: { ...f.config, [field.name]: v } }));
                            setServerErrors((s) => ({ ...s, [key]: undefined }));
                          }}
                          invalid={!!errors[key]}
                          aria-describedby={describedBy(id, errors[key], true)}
                        />
                      </Field>
                    );
                  })}
                  <Field
                    id="cred-concurrency-ceiling"
                    label="Calls in flight, all runs (optional)"
                    error={errors.concurrency_ceiling}
                    hint="The most calls on this key at once, over every run and worker together. Empty: no ceiling."
                  >
                    <Input
                      id="cred-concurrency-ceiling"
                      type="number"
                      inputMode="numeric"
                      min={1}
                      max={CEILING_MAX}
                      step={1}
                      value={form.ceiling}
                      autoComplete="off"
                      onChange={(e) => set('ceiling', e.target.value, 'concurrency_ceiling')}
                      invalid={!!errors.concurrency_ceiling}
                      aria-describedby={describedBy('cred-concurrency-ceiling', errors.concurrency_ceiling, true)}
                    />
                  </Field>
                </div>
              </fieldset>
              {mode !== 'none' && (
                <KeyFields form={form} mode={mode} editing={editing} errors={errors} set={set} />
              )}
              {mode === 'none' && <p className="text-sm text-zinc-600">This provider takes no API key.</p>}
              {!editing && (
                <div className="flex items-center gap-2">
                  <Checkbox id="cred-default" checked={form.isDefault} onChange={(e) => set('isDefault', e.target.checked, 'is_default')} />
                  <Label htmlFor="cred-default" className="font-normal">
                    Make it the default for {kind?.label ?? 'this provider'}
                  </Label>
                </div>
              )}
            </>
          )}
          <div className="flex justify-end gap-2 pt-2">
            <Button variant="secondary" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={pending} disabled={!form.kind}>
              {pending ? (editing ? 'Saving…' : 'Saving and testing…') : editing ? 'Save' : 'Add and test'}
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function KeyFields({
  form,
  mode,
  editing,
  errors,
  set,
}: {
  form: CredentialForm;
  mode: KeyMode;
  editing: Credential | null;
  errors: Errors;
  set: <K extends keyof CredentialForm>(key: K, value: CredentialForm[K], errorKey?: string) => void;
}) {
  const choices: Array<{ value: KeySourceChoice; label: string }> = [
    { value: 'stored', label: 'Store a key' },
    { value: 'env', label: 'Environment variable' },
    ...(mode === 'optional' ? [{ value: 'none' as const, label: 'No key' }] : []),
  ];
  const keeps = editing?.key_source === 'stored' && form.keySource === 'stored';
  const keyHint = keeps
    ? `Leave empty to keep the current key (${editing?.key_hint ?? '••••'}).`
    : 'Encrypted at rest and never shown again; only its last 4 characters are.';
  return (
    <>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-zinc-900">Where the key comes from</legend>
        <div className="flex flex-wrap gap-4">
          {choices.map((c) => (
            <label key={c.value} className="flex items-center gap-2 text-sm">
              <input
                type="radio"
                name="cred-key-source"
                value={c.value}
                checked={form.keySource === c.value}
                onChange={() => set('keySource', c.value, 'api_key')}
                className={cn('size-4 accent-indigo-600', focusRing)}
              />
              {c.label}
            </label>
          ))}
        </div>
      </fieldset>
      {form.keySource === 'stored' && (
        <Field id="cred-api-key" label={mode === 'optional' ? 'API key (optional)' : 'API key'} error={errors.api_key} hint={keyHint}>
          <Input
            id="cred-api-key"
            type="password"
            autoComplete="new-password"
            spellCheck={false}
            value={form.apiKey}
            placeholder={keeps ? editing?.key_hint ?? '••••' : undefined}
            onChange={(e) => set('apiKey', e.target.value, 'api_key')}
            invalid={!!errors.api_key}
            aria-describedby={describedBy('cred-api-key', errors.api_key, true)}
          />
        </Field>
      )}
      {form.keySource === 'env' && (
        <Field
          id="cred-secret-env"
          label="Environment variable name"
          error={errors.secret_env}
          hint="Read from the server’s environment at call time, e.g. OPENAI_API_KEY. Only a variable the operator grants this project is accepted, and its key goes only to the provider’s own URL unless the operator allows another."
        >
          <Input
            id="cred-secret-env"
            autoComplete="off"
            spellCheck={false}
            className="font-mono"
            value={form.secretEnv}
            placeholder="OPENAI_API_KEY"
            onChange={(e) => set('secretEnv', e.target.value, 'secret_env')}
            invalid={!!errors.secret_env}
            aria-describedby={describedBy('cred-secret-env', errors.secret_env, true)}
          />
        </Field>
      )}
      {form.keySource === 'none' && errors.api_key && <p className="text-sm text-red-700">{errors.api_key}</p>}
    </>
  );
}
