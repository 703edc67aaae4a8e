import { useEffect, useRef, useState } from 'react';
import { Link, Navigate, useLocation, useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { Alert, Button, Dialog, ErrorState, Skeleton } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError, type ApiError } from '@/api/errors';
import { formatMicros } from '@/lib/money';
import { cn, focusRing } from '@/lib/cn';
import { useQueryClient } from '@tanstack/react-query';
import { fromConfig, savable, type Experiment } from '../api';
import { mergeForms } from '../lib/merge';
import { emptyDraft, gridSize, type DraftForm } from '../lib/draft';
import { STEPS, errorsForStep, firstStepWithError, mapServerErrors, stepOfField, validateStep, type FieldErrors } from '../lib/validation';
import { expKeys, useApplyTemplate, useCreateExperiment, useEstimate, useExperiment, useSaveDraft, useStartExperiment, useValidateStep } from '../hooks/useExperiments';
import { useAutoSave } from '../hooks/useAutoSave';
import { CostEstimate } from '../components/CostEstimate';
import { Stepper } from '../components/wizard/Stepper';
import { ObjectiveStep } from '../components/wizard/ObjectiveStep';
import { RubricStep } from '../components/wizard/RubricStep';
import { PromptStep } from '../components/wizard/PromptStep';
import { DataStep } from '../components/wizard/DataStep';
import { ModelsStep } from '../components/wizard/ModelsStep';
import { JudgesStep } from '../components/wizard/JudgesStep';
import { StopStep } from '../components/wizard/StopStep';

/** A draft needs a name: the one typed, else the objective's first words. */
export const draftName = (f: DraftForm) => f.name.trim() || f.objective.trim().split(/\s+/).slice(0, 6).join(' ').slice(0, 200) || 'Untitled experiment';

const SAVE_LABEL = { idle: '', pending: 'Unsaved changes…', saving: 'Saving…', saved: 'All changes saved', error: 'Not saved: retrying on the next change', conflict: 'Changed elsewhere: merging…' } as const;

/** A save refused because the draft changed elsewhere, with fields both sides changed. */
interface Conflict {
  merged: DraftForm;
  mine: DraftForm;
  fields: (keyof DraftForm)[];
}

/** The 7-step wizard (FR-EC-001…007): a server-side draft, auto-saved, validated per step. */
export function WizardPage() {
  const projectId = Number(useParams().projectId);
  const routeId = useParams().experimentId;
  const experimentId = routeId ? Number(routeId) : null;
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const step = Math.min(STEPS.length - 1, Math.max(0, Number(params.get('step') ?? 0) || 0));
  const experiment = useExperiment(projectId, experimentId);
  const create = useCreateExperiment(projectId);
  const apply = useApplyTemplate(projectId);
  const saveDraft = useSaveDraft(projectId, experimentId);
  const validate = useValidateStep(projectId, experimentId);
  const start = useStartExperiment(projectId, experimentId);
  // Typed on /new while the draft was being created: carried over to /:id/edit.
  const carried = (useLocation().state as { form?: DraftForm } | null)?.form;
  const [form, setForm] = useState<DraftForm>(emptyDraft);
  const latest = useRef(form);
  latest.current = form;
  const [loaded, setLoaded] = useState(experimentId === null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [reached, setReached] = useState(step);
  const [confirm, setConfirm] = useState(false);
  const [templateBusy, setTemplateBusy] = useState<string | null>(null);
  const [startError, setStartError] = useState<string | null>(null);

  const qc = useQueryClient();
  // The draft's version this tab's form is based on: every save sends it (If-Match).
  const version = useRef<number | null>(null);
  const creating = useRef<Promise<Experiment> | null>(null);
  const choosingTemplate = useRef(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);

  // Stale (412): take what changed elsewhere, keep what changed here, ask when both did.
  const onStale = (error: ApiError, lastSaved: DraftForm | null) => {
    const current = error.current as Experiment | undefined;
    if (!current) return;
    const theirs = fromConfig(current.config ?? {}, current.name);
    const { merged, conflicts } = mergeForms(lastSaved, latest.current, theirs);
    version.current = current.row_version;
    qc.setQueryData(expKeys.one(projectId, current.id), current);
    autosave.baseline(theirs);
    if (conflicts.length) setConflict({ merged, mine: latest.current, fields: conflicts });
    else setForm(merged);
  };
  const autosave = useAutoSave(
    form,
    async (f) => {
      const saved = await saveDraft.mutateAsync({ name: f.name.trim() || undefined, config: savable(f), version: version.current });
      version.current = saved.row_version;
    },
    { armed: loaded && experimentId !== null && conflict === null, onStale },
  );

  // Resume a draft: the form starts from what the server holds.
  useEffect(() => {
    if (!loaded && experiment.data) {
      const f = fromConfig(experiment.data.config ?? {}, experiment.data.name);
      version.current = experiment.data.row_version;
      autosave.baseline(f);
      setForm(carried ?? f);
      setLoaded(true);
      setReached(STEPS.length - 1);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [experiment.data, loaded]);

  const estimate = useEstimate(projectId, experimentId, experiment.data?.updated_at);

  const go = (i: number) => {
    setParams({ step: String(i) }, { replace: true });
    setReached((r) => Math.max(r, i));
  };

  // The first edit on /new creates the draft; later edits PATCH it. Once per page: between
  // the create's answer and the move to /:id/edit more keystrokes arrive, and each would
  // create a draft of its own.
  const update = (patch: Partial<DraftForm>) => {
    const next = { ...form, ...patch };
    setForm(next);
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !(k.split('.')[0] in patch))));
    if (experimentId === null && creating.current === null) {
      const made = create.mutateAsync({ name: draftName(next), config: savable(next) });
      creating.current = made;
      made
        .then((e) => {
          if (!choosingTemplate.current) navigate(`/projects/${projectId}/experiments/${e.id}/edit?step=${step}`, { replace: true, state: { form: latest.current } });
        })
        .catch(() => {
          creating.current = null; // the next edit tries again
        });
    }
  };

  useEffect(() => {
    if (experimentId === null) creating.current = null; // back on /new (this page is reused)
  }, [experimentId]);

  // A template fills the draft already begun (one experiment, the template's content):
  // what was typed and not yet saved is dropped, a save in flight is waited for.
  const applyTemplate = async (key: string) => {
    setTemplateBusy(key);
    choosingTemplate.current = true;
    try {
      await autosave.settle();
      let into = experimentId;
      if (into === null && creating.current) {
        const made = await creating.current;
        into = made.id;
        version.current = made.row_version;
      }
      const e = await apply.mutateAsync({ slug: key, experimentId: into, version: version.current });
      qc.setQueryData(expKeys.one(projectId, e.id), e);
      const f = fromConfig(e.config ?? {}, e.name);
      version.current = e.row_version;
      autosave.baseline(f);
      setForm(f);
      setErrors({});
      navigate(`/projects/${projectId}/experiments/${e.id}/edit?step=0`, { replace: true, state: null });
    } catch {
      // apply.error is shown; a stale version reloads the draft
      if (experimentId !== null) void experiment.refetch();
    } finally {
      choosingTemplate.current = false;
      setTemplateBusy(null);
    }
  };

  const resolve = (keepMine: boolean) => {
    if (!conflict) return;
    const chosen = keepMine ? Object.fromEntries(conflict.fields.map((k) => [k, conflict.mine[k]])) : {};
    setForm({ ...conflict.merged, ...chosen });
    setConflict(null);
  };

  async function onContinue() {
    const key = STEPS[step].key;
    const local = validateStep(key, form);
    if (Object.keys(local).length) {
      setErrors(local);
      return;
    }
    try {
      await autosave.flush();
      if (experimentId !== null) await validate.mutateAsync(key);
    } catch (e) {
      const fe = mapServerErrors(fieldErrors(e));
      if (isApiError(e) && e.status === 422) {
        const mine = errorsForStep(key, fe);
        setErrors(Object.keys(mine).length ? mine : { [key]: e.message });
        return;
      }
      setErrors({ _: errorMessage(e) });
      return;
    }
    setErrors({});
    if (step < STEPS.length - 1) go(step + 1);
    else setConfirm(true);
  }

  async function onStart() {
    setStartError(null);
    try {
      await autosave.flush();
      await start.mutateAsync();
      navigate(`/projects/${projectId}/experiments/${experimentId}`);
    } catch (e) {
      const fe = mapServerErrors(fieldErrors(e));
      const at = firstStepWithError(fe);
      if (at !== null) {
        setConfirm(false);
        setErrors(fe);
        go(at);
      }
      setStartError(errorMessage(e));
    }
  }

  if (experimentId !== null && experiment.isError) {
    return <ErrorState title="Could not load the experiment" error={experiment.error} onRetry={() => experiment.refetch()} retrying={experiment.isFetching} />;
  }
  if (experiment.data && experiment.data.status !== 'draft') return <Navigate to={`/projects/${projectId}/experiments/${experimentId}`} replace />;
  if (!loaded) {
    return (
      <div role="status" aria-label="Loading draft" className="space-y-3">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-64 w-full" />
      </div>
    );
  }

  const props = { projectId, experimentId, draft: form, update, errors };
  const invalid = new Set(Object.keys(errors).map((k) => STEPS.findIndex((s) => s.key === stepOfField(k))).filter((i) => i >= 0));
  const est = estimate.data;
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 className="text-lg font-semibold">
          {experimentId === null ? 'New experiment' : `Draft: ${form.name || experiment.data?.name || 'untitled'}`}
        </h2>
        <p className="text-sm text-zinc-600" role="status" data-testid="save-state">
          {experimentId === null ? 'Not saved yet: your first change creates the draft.' : SAVE_LABEL[autosave.state]}
        </p>
      </div>
      <Stepper current={step} reached={reached} invalid={invalid} onGo={go} />
      <div className="grid gap-4 lg:grid-cols-[1fr_16rem]">
        <section aria-labelledby="step-title" className="min-w-0 space-y-4 rounded-xl border border-zinc-200 bg-white p-4">
          <h3 id="step-title" className="text-base font-semibold">
            Step {step + 1} of 7: {STEPS[step].title}
          </h3>
          {step === 0 && <ObjectiveStep {...props} onTemplate={(key) => void applyTemplate(key)} templateBusy={templateBusy} />}
          {step === 1 && <RubricStep {...props} />}
          {step === 2 && <PromptStep {...props} />}
          {step === 3 && <DataStep {...props} />}
          {step === 4 && <ModelsStep {...props} />}
          {step === 5 && <JudgesStep {...props} />}
          {step === 6 && <StopStep {...props} />}
          {templateBusy && <p className="text-sm text-zinc-600">Applying the template…</p>}
          {create.isError && <Alert>{errorMessage(create.error)}</Alert>}
          {apply.isError && <Alert>{errorMessage(apply.error)}</Alert>}
          {errors._ && <Alert>{errors._}</Alert>}
          {Object.keys(errors).length > 0 && !errors._ && (
            <Alert>Fix the highlighted fields to continue.</Alert>
          )}
          <div className="flex flex-wrap justify-between gap-2 border-t border-zinc-100 pt-4">
            {step > 0 ? (
              <Button variant="secondary" onClick={() => go(step - 1)}>
                ← Back
              </Button>
            ) : (
              <Link to={`/projects/${projectId}/experiments`} className={cn('inline-flex h-10 items-center rounded-xl px-4 text-sm text-zinc-700 hover:bg-zinc-100', focusRing)}>
                ← Experiments
              </Link>
            )}
            <Button onClick={() => void onContinue()} loading={validate.isPending || autosave.state === 'saving'} disabled={experimentId === null && step > 0}>
              {step === STEPS.length - 1 ? 'Create experiment →' : 'Continue →'}
            </Button>
          </div>
        </section>
        <aside className="min-w-0 space-y-3">
          <CostEstimate estimate={est} loading={estimate.isFetching} error={estimate.isError ? errorMessage(estimate.error) : null} />
        </aside>
      </div>
      <Dialog
        open={conflict !== null}
        onClose={() => resolve(false)}
        title="This draft was changed elsewhere"
        footer={
          <>
            <Button variant="secondary" onClick={() => resolve(true)}>
              Keep mine
            </Button>
            <Button onClick={() => resolve(false)} data-autofocus>
              Keep theirs
            </Button>
          </>
        }
      >
        <p className="text-sm text-zinc-700">
          Someone (or another tab) saved a newer version while you edited. Your other changes are merged; these fields were changed on both sides:{' '}
          <strong>{conflict?.fields.join(', ')}</strong>. Keep theirs, or replace them with yours?
        </p>
      </Dialog>
      <Dialog
        open={confirm}
        onClose={() => setConfirm(false)}
        title="Create experiment?"
        footer={
          <>
            <Button variant="secondary" onClick={() => setConfirm(false)}>
              Cancel
            </Button>
            <Button onClick={() => void onStart()} loading={start.isPending} data-autofocus>
              Create &amp; run →
            </Button>
          </>
        }
      >
        <ul className="list-disc space-y-1 pl-5 text-sm text-zinc-700">
          <li>{gridSize(form)} model configuration{gridSize(form) === 1 ? '' : 's'}</li>
          <li>{est?.cases !== undefined ? `${est.cases} test cases` : 'The chosen dataset version'}</li>
          <li>{form.judge_model_ids.length} judge{form.judge_model_ids.length === 1 ? '' : 's'}{form.pairwise ? ' + pairwise' : ''}</li>
          <li>Up to {form.max_iterations} iterations, budget ${form.max_spend_dollars}</li>
        </ul>
        <p className="mt-3 text-sm font-medium">Estimated cost: {est ? `${formatMicros(est.low_micros)} – ${formatMicros(est.high_micros)}` : 'unknown'}</p>
        {startError && <Alert className="mt-3">{startError}</Alert>}
      </Dialog>
    </div>
  );
}
