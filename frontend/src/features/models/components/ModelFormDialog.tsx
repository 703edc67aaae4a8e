import { isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router-dom';
import { Alert, Button, buttonClasses, describedBy, Dialog, ErrorState, Field, Input, LoadingRows, Select, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import type { Credential, ModelConfig, ModelCreateBody, ProviderKind } from '@/api/providerTypes';
import { microsToDollars, parseDollars } from '@/lib/money';
import { useFocusFirstInvalid } from '@/lib/useFocusFirstInvalid';
import { useCredentials, useDiscoverModels, useProviderKinds } from '@/features/providers/hooks/useCredentials';
import { shortKindLabel } from '@/features/providers/kinds';
import { useCreateModel, useUpdateModel } from '../hooks/useModelConfigs';
import { emptyParams, paramRules, paramsToForm, PARAM_NAMES, validateParams, type ParamForm, type ParamName } from '../params';

export interface ModelForm {
  name: string;
  credentialId: string;
  model: string;
  inputPrice: string;
  outputPrice: string;
  contextWindow: string;
  params: ParamForm;
}

type Errors = Partial<Record<string, string>>;

const emptyForm: ModelForm = {
  name: '',
  credentialId: '',
  model: '',
  inputPrice: '',
  outputPrice: '',
  contextWindow: '',
  params: emptyParams,
};

function formFromModel(m: ModelConfig): ModelForm {
  return {
    name: m.name,
    credentialId: String(m.credential_id),
    model: m.model,
    inputPrice: microsToDollars(m.input_price_per_mtok_micros),
    outputPrice: microsToDollars(m.output_price_per_mtok_micros),
    contextWindow: m.context_window == null ? '' : String(m.context_window),
    params: paramsToForm(m.params),
  };
}

/** Checks the form; returns blocking errors, parameter warnings and the body to send. */
export function buildModelBody(f: ModelForm, provider: string | undefined) {
  const errors: Errors = {};
  const name = f.name.trim();
  if (!name) errors.name = 'Give the model a name, such as "gpt-4o-mini, temperature 0".';
  else if (name.length > 100) errors.name = 'The name must be at most 100 characters.';
  if (!f.credentialId) errors.credential_id = 'Choose a provider.';
  const model = f.model.trim();
  if (!model) errors.model = 'Enter the provider’s model id.';
  else if (model.length > 200) errors.model = 'The model id must be at most 200 characters.';
  const input = parseDollars(f.inputPrice);
  if (!input.ok) errors.input_price_per_mtok_micros = input.error;
  const output = parseDollars(f.outputPrice);
  if (!output.ok) errors.output_price_per_mtok_micros = output.error;
  let contextWindow: number | null = null;
  const cw = f.contextWindow.trim().replace(/[,_\s]/g, '');
  if (cw) {
    if (!/^\d+$/.test(cw) || Number(cw) < 1 || !Number.isSafeInteger(Number(cw))) {
      errors.context_window = 'Enter a whole number of tokens, at least 1.';
    } else contextWindow = Number(cw);
  }
  const params = validateParams(provider, f.params);
  for (const [k, v] of Object.entries(params.errors)) errors[`params.${k}`] = v;
  const body: ModelCreateBody = {
    name,
    credential_id: Number(f.credentialId),
    model,
    input_price_per_mtok_micros: input.ok ? input.micros : null,
    output_price_per_mtok_micros: output.ok ? output.micros : null,
    context_window: contextWindow,
    params: params.params,
  };
  return { errors, warnings: params.warnings, body };
}

const PLACED = ['name', 'credential_id', 'model', 'input_price_per_mtok_micros', 'output_price_per_mtok_micros', 'context_window'];
const isPlaced = (k: string) => PLACED.includes(k) || PARAM_NAMES.some((p) => k === `params.${p}`);

export function ModelFormDialog({
  projectId,
  open,
  onClose,
  editing,
}: {
  projectId: number;
  open: boolean;
  onClose: () => void;
  editing: ModelConfig | null;
}) {
  return open ? <ModelFormBody projectId={projectId} onClose={onClose} editing={editing} /> : null;
}

function ModelFormBody({ projectId, onClose, editing }: { projectId: number; onClose: () => void; editing: ModelConfig | null }) {
  const credentials = useCredentials(projectId);
  const kinds = useProviderKinds();
  const create = useCreateModel(projectId);
  const queryClient = useQueryClient();
  const update = useUpdateModel(projectId);
  const discover = useDiscoverModels(projectId);
  const [form, setForm] = useState<ModelForm>(editing ? formFromModel(editing) : emptyForm);
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const { ref: formRef, focusFirstInvalid } = useFocusFirstInvalid<HTMLFormElement>();

  const credential: Credential | undefined = credentials.data?.items.find((c) => String(c.id) === form.credentialId);
  const provider = credential?.kind ?? editing?.provider;
  const kind: ProviderKind | undefined = kinds.data?.find((k) => k.kind === provider);
  const rules = paramRules(provider);
  const check = buildModelBody(form, provider);
  const errors: Errors = { ...serverErrors, ...(submitted ? check.errors : {}) };
  const pending = create.isPending || update.isPending;
  const canDiscover = !!credential && kind?.supports_discovery !== false;
  const discovered = discover.data && discover.variables === credential?.id ? discover.data.items : null;

  function set<K extends keyof ModelForm>(key: K, value: ModelForm[K], errorKey: string = key) {
    setForm((f) => ({ ...f, [key]: value }));
    setServerErrors((s) => ({ ...s, [errorKey]: undefined }));
  }

  function setParam(name: ParamName, value: string) {
    setForm((f) => ({ ...f, params: { ...f.params, [name]: value } }));
    setServerErrors((s) => ({ ...s, [`params.${name}`]: undefined, params: undefined }));
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSubmitted(true);
    setServerErrors({});
    setFormError(null);
    if (Object.keys(check.errors).length > 0) return focusFirstInvalid();
    const handlers = {
      onSuccess: () => onClose(),
      onError: (err: unknown) => {
        if (isStaleWrite(err)) return; // StaleWriteNotice says it; the form keeps what was typed
        const fe: Errors = {};
        for (const [k, v] of Object.entries(fieldErrors(err))) fe[k.replace(/^json\./, '')] = v;
        setServerErrors(fe);
        focusFirstInvalid();
        const unplaced = Object.keys(fe).filter((k) => !isPlaced(k));
        if (Object.keys(fe).length === 0) setFormError(errorMessage(err));
        else if (unplaced.length > 0) setFormError([errorMessage(err), ...unplaced.map((k) => `${k}: ${fe[k]}`)].join(' '));
      },
    };
    if (editing) update.mutate({ id: editing.id, body: check.body, version: editing.row_version }, handlers);
    else create.mutate(check.body, handlers);
  }

  const title = editing ? 'Edit model' : 'Add model';
  const noProviders = credentials.data && credentials.data.items.length === 0;

  return (
    <Dialog open size="wide" onClose={onClose} title={title} description="A named configuration of a provider’s model: its prices and default parameters.">
      {credentials.isPending ? (
        <LoadingRows label="Loading providers" />
      ) : credentials.isError ? (
        <ErrorState title="Could not load providers" error={credentials.error} onRetry={() => credentials.refetch()} retrying={credentials.isFetching} />
      ) : noProviders ? (
        <div className="space-y-4">
          <p className="text-sm text-zinc-600">A model calls a provider: add one first (admins and owners can).</p>
          <div className="flex justify-end gap-2">
            <Button variant="secondary" onClick={onClose}>
              Cancel
            </Button>
            <Link to={`/projects/${projectId}/providers`} className={buttonClasses('primary')}>
              Go to providers
            </Link>
          </div>
        </div>
      ) : (
        <form ref={formRef} noValidate onSubmit={onSubmit} className="space-y-4">
          <StaleWriteNotice
            error={update.error}
            onReload={() => {
              update.reset();
              void queryClient.invalidateQueries({ queryKey: qk.models(projectId) });
            }}
          />
          {formError && <Alert>{formError}</Alert>}
          <Field id="model-name" label="Name" error={errors.name} hint="Unique in this project; runs and reports show it.">
            <Input
              id="model-name"
              data-autofocus
              value={form.name}
              maxLength={100}
              onChange={(e) => set('name', e.target.value)}
              invalid={!!errors.name}
              aria-describedby={describedBy('model-name', errors.name, true)}
            />
          </Field>
          <Field id="model-credential" label="Provider" error={errors.credential_id}>
            <Select
              id="model-credential"
              className="w-full"
              value={form.credentialId}
              onChange={(e) => {
                set('credentialId', e.target.value, 'credential_id');
                discover.reset();
              }}
              aria-invalid={!!errors.credential_id || undefined}
              aria-describedby={describedBy('model-credential', errors.credential_id)}
            >
              <option value="">Choose a provider</option>
              {credentials.data.items.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.label} — {shortKindLabel(kinds.data, c.kind)}
                  {c.is_default ? ' (default)' : ''}
                </option>
              ))}
            </Select>
          </Field>
          <Field
            id="model-id"
            label="Model id"
            error={errors.model}
            hint={provider === 'azure_openai' ? 'For Azure OpenAI: the deployment name.' : 'As the provider names it, e.g. gpt-4o-mini.'}
          >
            <div className="flex gap-2">
              <Input
                id="model-id"
                className="font-mono"
                autoComplete="off"
                spellCheck={false}
                value={form.model}
                maxLength={200}
                onChange={(e) => set('model', e.target.value)}
                invalid={!!errors.model}
                aria-describedby={describedBy('model-id', errors.model, true)}
              />
              <Button
                variant="secondary"
                disabled={!canDiscover}
                loading={discover.isPending}
                onClick={() => credential && discover.mutate(credential.id)}
                title={!credential ? 'Choose a provider first' : !canDiscover ? 'This provider cannot list its models' : undefined}
              >
                Discover
              </Button>
            </div>
          </Field>
          {discover.isError && <Alert>{errorMessage(discover.error)}</Alert>}
          {discovered &&
            (discovered.length === 0 ? (
              <p className="text-sm text-zinc-600" role="status">
                The provider listed no models.
              </p>
            ) : (
              <Field id="model-discovered" label={`Discovered models (${discovered.length})`}>
                <Select
                  id="model-discovered"
                  className="w-full font-mono"
                  value={discovered.some((d) => d.id === form.model) ? form.model : ''}
                  onChange={(e) => e.target.value && set('model', e.target.value)}
                >
                  <option value="">Pick one to fill the model id</option>
                  {discovered.map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.id}
                      {d.name && d.name !== d.id ? ` (${d.name})` : ''}
                      {d.configured ? ' · already configured' : ''}
                    </option>
                  ))}
                </Select>
              </Field>
            ))}
          <div className="grid gap-4 sm:grid-cols-2">
            <PriceField
              id="model-input-price"
              label="Input price"
              value={form.inputPrice}
              error={errors.input_price_per_mtok_micros}
              onChange={(v) => set('inputPrice', v, 'input_price_per_mtok_micros')}
            />
            <PriceField
              id="model-output-price"
              label="Output price"
              value={form.outputPrice}
              error={errors.output_price_per_mtok_micros}
              onChange={(v) => set('outputPrice', v, 'output_price_per_mtok_micros')}
            />
          </div>
          {(form.inputPrice.trim() === '' || form.outputPrice.trim() === '') && (
            <p className="text-sm text-amber-800">Without both prices the model is flagged Unpriced: its cost is unknown, never counted as free.</p>
          )}
          <Field id="model-context" label="Context window (optional)" error={errors.context_window} hint="In tokens, e.g. 128000.">
            <Input
              id="model-context"
              inputMode="numeric"
              value={form.contextWindow}
              onChange={(e) => set('contextWindow', e.target.value, 'context_window')}
              invalid={!!errors.context_window}
              aria-describedby={describedBy('model-context', errors.context_window, true)}
            />
          </Field>
          <fieldset className="space-y-3 rounded-xl border border-zinc-200 p-3">
            <legend className="px-1 text-sm font-medium text-zinc-900">Default parameters (optional)</legend>
            {errors.params && <p className="text-sm text-red-700">{errors.params}</p>}
            <div className="grid gap-4 sm:grid-cols-2">
              {PARAM_NAMES.filter((n) => n !== 'stop').map((name) => (
                <ParamField
                  key={name}
                  name={name}
                  label={rules[name].label}
                  hint={rules[name].hint}
                  value={form.params[name]}
                  error={errors[`params.${name}`]}
                  warning={check.warnings[name]}
                  disabledHint={!rules[name].supported && !form.params[name]}
                  onChange={(v) => setParam(name, v)}
                />
              ))}
            </div>
            <ParamField
              name="stop"
              label={rules.stop.label}
              hint={rules.stop.hint}
              value={form.params.stop}
              error={errors['params.stop']}
              warning={check.warnings.stop}
              multiline
              onChange={(v) => setParam('stop', v)}
            />
          </fieldset>
          <div className="flex justify-end gap-2 pt-2">
            <Button variant="secondary" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={pending}>
              {editing ? 'Save model' : 'Add model'}
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

function PriceField({ id, label, value, error, onChange }: { id: string; label: string; value: string; error?: string; onChange: (v: string) => void }) {
  return (
    <Field id={id} label={`${label} ($ per 1M tokens)`} error={error} hint="e.g. 0.15; empty if unknown.">
      <div className="relative">
        <span aria-hidden="true" className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-sm text-zinc-500">
          $
        </span>
        <Input
          id={id}
          inputMode="decimal"
          autoComplete="off"
          className="pl-7 tabular-nums"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          invalid={!!error}
          aria-describedby={describedBy(id, error, true)}
        />
      </div>
    </Field>
  );
}

function ParamField({
  name,
  label,
  hint,
  value,
  error,
  warning,
  multiline,
  disabledHint,
  onChange,
}: {
  name: ParamName;
  label: string;
  hint: string;
  value: string;
  error?: string;
  warning?: string;
  multiline?: boolean;
  disabledHint?: boolean;
  onChange: (v: string) => void;
}) {
  const id = `model-param-${name}`;
  const describedById = error ? `${id}-error` : warning ? `${id}-warning` : `${id}-hint`;
  return (
    <div className="space-y-2">
      <label htmlFor={id} className="block text-sm font-medium text-zinc-900">
        {label}
      </label>
      {multiline ? (
        <Textarea id={id} className="min-h-20 font-mono" value={value} onChange={(e) => onChange(e.target.value)} invalid={!!error} aria-describedby={describedById} />
      ) : (
        <Input
          id={id}
          inputMode={name === 'max_tokens' || name === 'seed' ? 'numeric' : 'decimal'}
          autoComplete="off"
          className={disabledHint ? 'bg-zinc-50' : undefined}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          invalid={!!error}
          aria-describedby={describedById}
        />
      )}
      {error ? (
        <p id={`${id}-error`} className="text-sm text-red-700">
          {error}
        </p>
      ) : warning ? (
        <p id={`${id}-warning`} className="text-sm text-amber-800">
          {warning} The server decides when you save.
        </p>
      ) : (
        <p id={`${id}-hint`} className="text-sm text-zinc-500">
          {hint}
        </p>
      )}
    </div>
  );
}
