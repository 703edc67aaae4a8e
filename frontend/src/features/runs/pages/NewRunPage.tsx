import { useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import {
  Alert,
  Button,
  buttonClasses,
  Card,
  CardContent,
  CardHeader,
  CardTitle,
  Checkbox,
  describedBy,
  EmptyState,
  ErrorState,
  Field,
  Input,
  Label,
  LoadingRows,
  Select,
} from '@/components/ui';
import { errorMessage, fieldErrors, isApiError } from '@/api/errors';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { KIND_LABELS, type DatasetKind } from '@/features/datasets/api';
import { shortKindLabel } from '@/features/providers/kinds';
import { formatMicros, parseDollars } from '@/lib/money';
import { useFocusFirstInvalid } from '@/lib/useFocusFirstInvalid';
import { notReadyReasons, type RunCreateBody, type RunEstimate, type RunProblem } from '../api';
import {
  buildRunBody,
  callsLine,
  expandedTargetCount,
  HISTORY_MAX,
  initialRunForm,
  MAX_EXPANDED_TARGETS,
  newTarget,
  REPEATS_MAX,
  type FormErrors,
  type RunForm,
  type TargetForm,
} from '../config';
import { ConfirmRunDialog } from '../components/ConfirmRunDialog';
import { RunProblems } from '../components/RunProblems';
import { TargetCard } from '../components/TargetCard';
import { RunScorersCard } from '../scoring/RunScorersCard';
import { RagSection } from '../rag/RagSection';
import { useCreateRun, useDatasets, useDatasetVersions, useEstimateRun, useModels, usePrompts } from '../hooks/useRuns';

/** The run configuration page: dataset and version, targets with overrides and a grid, settings, review and start. */
export function NewRunPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const navigate = useNavigate();
  const datasets = useDatasets(projectId);
  const models = useModels(projectId);
  const prompts = usePrompts(projectId);
  const [form, setForm] = useState<RunForm>(initialRunForm);
  const [errors, setErrors] = useState<FormErrors>({});
  const [reasons, setReasons] = useState<RunProblem[]>([]);
  const [pending, setPending] = useState<{ body: RunCreateBody; estimate: RunEstimate } | null>(null);
  const versions = useDatasetVersions(projectId, form.datasetId);
  const estimate = useEstimateRun(projectId);
  const create = useCreateRun(projectId);
  const { ref: formRef, focusFirstInvalid } = useFocusFirstInvalid<HTMLFormElement>();

  const activeModels = useMemo(() => (models.data?.items ?? []).filter((m) => !m.archived_at), [models.data]);
  const modelById = useMemo(() => new Map((models.data?.items ?? []).map((m) => [m.id, m])), [models.data]);
  const dataset = datasets.data?.items.find((d) => d.id === form.datasetId) ?? null;
  const kind = (dataset?.kind ?? undefined) as DatasetKind | undefined;
  const traces = kind === 'traces';
  const version = form.versionId !== null ? versions.data?.find((v) => v.id === form.versionId) : undefined;
  const cases = version?.case_count ?? dataset?.case_count ?? 0;
  const repeats = /^\d+$/.test(form.repeats.trim()) ? Math.max(1, Number(form.repeats)) : 1;
  const targetCount = traces ? 1 : expandedTargetCount(form.targets);
  const budget = parseDollars(form.budget);

  if (!roleAtLeast(project.role, 'editor')) {
    return <EmptyState title="Editors start runs" description="Your role in this project can view runs but not start them." />;
  }
  if (datasets.isPending || models.isPending) return <LoadingRows label="Loading datasets and models" />;
  const failed = datasets.isError ? datasets : models.isError ? models : null;
  if (failed) return <ErrorState title="Could not load datasets and models" error={failed.error} onRetry={() => failed.refetch()} />;
  if (datasets.data!.items.length === 0 || activeModels.length === 0) {
    return (
      <EmptyState
        title="A run needs a dataset and a model"
        description={`This project has ${datasets.data!.items.length === 0 ? 'no dataset' : 'no active model'} yet.`}
        action={
          <Link to={`/projects/${projectId}/${datasets.data!.items.length === 0 ? 'datasets' : 'models'}`} className={buttonClasses('secondary')}>
            {datasets.data!.items.length === 0 ? 'Go to datasets' : 'Go to models'}
          </Link>
        }
      />
    );
  }

  const set = (patch: Partial<RunForm>) => setForm((f) => ({ ...f, ...patch }));
  const toggleModel = (modelId: number, on: boolean) =>
    setForm((f) => ({
      ...f,
      targets: on ? [...f.targets, newTarget(modelId, f.targets[0])] : f.targets.filter((t) => t.modelId !== modelId),
    }));
  const setTarget = (t: TargetForm) => setForm((f) => ({ ...f, targets: f.targets.map((x) => (x.key === t.key ? t : x)) }));

  function review(e: FormEvent) {
    e.preventDefault();
    const { body, errors: errs } = buildRunBody(form, { kind, providerOf: (id) => modelById.get(id)?.provider });
    setErrors(errs);
    if (!body) {
      focusFirstInvalid();
      return;
    }
    setReasons([]);
    estimate.mutate(body, {
      onSuccess: (est) => setPending({ body, estimate: est }),
      onError: (err) => {
        setReasons(notReadyReasons(err));
        const fe = fieldErrors(err);
        if (Object.keys(fe).length) setErrors((prev) => ({ ...prev, ...fe }));
      },
    });
  }

  function start() {
    if (!pending) return;
    create.mutate(pending.body, {
      onSuccess: (run) => navigate(`/projects/${projectId}/runs/${run.id}`),
      onError: (err) => {
        const r = notReadyReasons(err);
        const fe = fieldErrors(err);
        if (r.length > 0) {
          setReasons(r);
          setPending(null);
        } else if (Object.keys(fe).length) {
          // A field the server refused (a document deleted since the review…): shown under it.
          setErrors((prev) => ({ ...prev, ...fe }));
          setPending(null);
          create.reset();
        }
      },
    });
  }

  const err = (k: string) => errors[k] ?? null;
  const numberField = (key: 'repeats' | 'concurrency' | 'maxHistoryPairs' | 'timeout' | 'maxRetries', label: string, hint: string) => (
    <Field id={`run-${key}`} label={label} error={err(key)} hint={hint}>
      <Input
        id={`run-${key}`}
        inputMode="numeric"
        value={form[key]}
        invalid={!!err(key)}
        aria-describedby={describedBy(`run-${key}`, err(key), true)}
        onChange={(e) => set({ [key]: e.target.value })}
      />
    </Field>
  );
  const otherErrors = Object.entries(errors).filter(
    ([k]) => !['dataset', 'targets', 'repeats', 'concurrency', 'maxHistoryPairs', 'timeout', 'maxRetries', 'budget', 'alertPercent'].includes(k) &&
      !k.startsWith('t-') &&
      !k.startsWith('g-') &&
      !k.startsWith('rag.') &&
      !k.startsWith('scorer'),
  );

  return (
    <form ref={formRef} noValidate onSubmit={review} className="grid gap-6 lg:grid-cols-[1fr_20rem]" aria-labelledby="new-run-heading">
      <div className="space-y-6">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h2 id="new-run-heading" className="text-xl font-semibold">
            New run
          </h2>
          <Link to={`/projects/${projectId}`} className={buttonClasses('ghost', 'sm')}>
            Back to runs
          </Link>
        </div>

        <Card>
          <CardHeader>
            <CardTitle>Dataset</CardTitle>
          </CardHeader>
          <CardContent className="grid gap-4 sm:grid-cols-2">
            <Field id="run-name" label="Run name (optional)">
              <Input id="run-name" value={form.name} maxLength={200} onChange={(e) => set({ name: e.target.value })} />
            </Field>
            <div />
            <Field id="run-dataset" label="Dataset" error={err('dataset')}>
              <Select
                id="run-dataset"
                className="w-full"
                value={form.datasetId ?? ''}
                aria-invalid={!!err('dataset') || undefined}
                aria-describedby={describedBy('run-dataset', err('dataset'))}
                onChange={(e) => set({ datasetId: e.target.value ? Number(e.target.value) : null, versionId: null })}
              >
                <option value="">Choose a dataset</option>
                {datasets.data!.items.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name} ({KIND_LABELS[d.kind as DatasetKind] ?? d.kind}, {d.case_count} cases)
                  </option>
                ))}
              </Select>
            </Field>
            <Field id="run-version" label="Version">
              <Select
                id="run-version"
                className="w-full"
                disabled={!dataset}
                value={form.versionId ?? ''}
                onChange={(e) => set({ versionId: e.target.value ? Number(e.target.value) : null })}
              >
                <option value="">{dataset ? `Latest (v${dataset.version}, ${dataset.case_count} cases)` : 'Latest'}</option>
                {versions.data
                  ?.filter((v) => v.id !== undefined && v.number !== dataset?.version)
                  .map((v) => (
                    <option key={v.id} value={v.id}>
                      v{v.number} ({v.case_count} cases)
                    </option>
                  ))}
              </Select>
            </Field>
          </CardContent>
        </Card>

        <Card>
          <CardHeader>
            <CardTitle>Targets</CardTitle>
          </CardHeader>
          <CardContent className="space-y-4">
            {traces ? (
              <p className="text-sm text-zinc-600">
                A traces dataset needs no model: each case&apos;s recorded trace is its output.
              </p>
            ) : (
              <>
                <fieldset className="space-y-2">
                  <legend className="text-sm font-medium">Models</legend>
                  {err('targets') && (
                    <p id="run-targets-error" className="text-sm text-red-700" role="alert">
                      {err('targets')}
                    </p>
                  )}
                  <div className="grid gap-2 sm:grid-cols-2">
                    {activeModels.map((m) => (
                      <div key={m.id} className="flex items-center gap-2">
                        <Checkbox
                          id={`run-model-${m.id}`}
                          checked={form.targets.some((t) => t.modelId === m.id)}
                          onChange={(e) => toggleModel(m.id, e.target.checked)}
                        />
                        <Label htmlFor={`run-model-${m.id}`} className="font-normal">
                          {m.name}{' '}
                          <span className="text-zinc-500">
                            ({shortKindLabel(undefined, m.provider)} · {m.model})
                          </span>
                          {!m.priced && <span className="text-amber-800"> · unpriced</span>}
                        </Label>
                      </div>
                    ))}
                  </div>
                </fieldset>
                {form.targets.length > 0 && (
                  <ul className="space-y-3" aria-label="Configured targets">
                    {form.targets.map((t) => {
                      const m = modelById.get(t.modelId);
                      if (!m) return null;
                      return (
                        <TargetCard
                          key={t.key}
                          projectId={projectId}
                          model={m}
                          target={t}
                          prompts={prompts.data ?? []}
                          promptRequired={kind === 'cases'}
                          errors={errors}
                          onChange={setTarget}
                          onRemove={() => toggleModel(t.modelId, false)}
                        />
                      );
                    })}
                  </ul>
                )}
                {prompts.isError && <Alert tone="info">Prompts could not be loaded: {errorMessage(prompts.error)}</Alert>}
              </>
            )}
          </CardContent>
        </Card>

        <RagSection projectId={projectId} value={form.rag} onChange={(rag) => set({ rag })} errors={errors} traces={traces} />

        <RunScorersCard
          projectId={projectId}
          value={form.scorers}
          onChange={(scorers) => set({ scorers })}
          error={Object.entries(errors).find(([k]) => k.startsWith('scorer'))?.[1] ?? null}
        />

        <Card>
          <CardHeader>
            <CardTitle>Settings</CardTitle>
          </CardHeader>
          <CardContent className="grid gap-4 sm:grid-cols-2">
            {numberField('repeats', 'Repeats', `Samples per case and target, 1 to ${REPEATS_MAX}.`)}
            {numberField('concurrency', 'Concurrency (optional)', "Calls in flight at once over the whole run, all workers together; empty: the project's default.")}
            {kind === 'conversations' &&
              numberField('maxHistoryPairs', 'Max history pairs', `Earlier user/assistant pairs sent with each turn, 1 to ${HISTORY_MAX}.`)}
            {numberField('timeout', 'Timeout in seconds (optional)', "Per attempt of a call; empty: the project's default (else 120).")}
            {numberField('maxRetries', 'Max retries (optional)', "Retries of a rate limit, timeout or server error, 0 to 10; empty: the project's default.")}
            <Field id="run-budget" label="Budget in dollars (optional)" error={err('budget')} hint="The run stops as budget exceeded before spending more.">
              <Input
                id="run-budget"
                inputMode="decimal"
                placeholder="No cap"
                value={form.budget}
                invalid={!!err('budget')}
                aria-describedby={describedBy('run-budget', err('budget'), true)}
                onChange={(e) => set({ budget: e.target.value })}
              />
            </Field>
            <Field id="run-alertPercent" label="Alert at (% of the budget)" error={err('alertPercent')} hint="An alert event when spend reaches this share.">
              <Input
                id="run-alertPercent"
                inputMode="decimal"
                value={form.alertPercent}
                invalid={!!err('alertPercent')}
                aria-describedby={describedBy('run-alertPercent', err('alertPercent'), true)}
                onChange={(e) => set({ alertPercent: e.target.value })}
              />
            </Field>
            <div className="flex items-center gap-2">
              <Checkbox id="run-cache" checked={form.cache} onChange={(e) => set({ cache: e.target.checked })} />
              <Label htmlFor="run-cache" className="font-normal">
                Use the response cache (deterministic calls; cached outputs are free)
              </Label>
            </div>
            <div className="flex items-center gap-2">
              <Checkbox id="run-stream" checked={form.stream} onChange={(e) => set({ stream: e.target.checked })} />
              <Label htmlFor="run-stream" className="font-normal">
                Stream replies (records time to first token)
              </Label>
            </div>
          </CardContent>
        </Card>
      </div>

      <aside className="space-y-4 lg:sticky lg:top-4 lg:self-start" aria-label="Run summary">
        <Card>
          <CardContent className="space-y-3">
            <p className="text-base font-semibold tabular-nums text-zinc-900" data-testid="calls-line" aria-live="polite">
              {callsLine(targetCount, cases, repeats)}
            </p>
            {!traces && targetCount > MAX_EXPANDED_TARGETS && (
              <p className="text-sm text-red-700">At most {MAX_EXPANDED_TARGETS} targets after the grid expands.</p>
            )}
            {kind === 'conversations' && (
              <p className="text-sm text-zinc-500">Conversation cases make one call per user turn, so the estimate counts more calls.</p>
            )}
            {budget.ok && budget.micros !== null && budget.micros > 0 && (
              <p className="text-sm text-zinc-600">
                Budget {formatMicros(budget.micros)} · alert at {form.alertPercent.trim() || '—'}%
              </p>
            )}
            <Button type="submit" className="w-full" loading={estimate.isPending}>
              Review
            </Button>
            {estimate.isError && reasons.length === 0 && (
              <Alert>
                Could not estimate the run: {errorMessage(estimate.error)}
                {otherErrors.length > 0 && (
                  <ul className="mt-1 list-disc pl-5">
                    {otherErrors.map(([k, v]) => (
                      <li key={k}>
                        {k}: {v}
                      </li>
                    ))}
                  </ul>
                )}
              </Alert>
            )}
            {create.isError && !isApiError(create.error) && <Alert>{errorMessage(create.error)}</Alert>}
          </CardContent>
        </Card>
        <RunProblems problems={reasons} />
      </aside>

      <ConfirmRunDialog
        open={pending !== null}
        estimate={pending?.estimate ?? null}
        modelName={(id) => modelById.get(id)?.name ?? `model #${id}`}
        budgetMicros={pending?.body.budget_micros ?? null}
        starting={create.isPending}
        startError={create.isError && notReadyReasons(create.error).length === 0 ? create.error : null}
        onStart={start}
        onClose={() => {
          setPending(null);
          create.reset();
        }}
      />
    </form>
  );
}
