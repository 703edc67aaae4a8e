import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, Button, buttonClasses, Card, CardContent, CardHeader, CardTitle, describedBy, ErrorState, Field, Input, LoadingRows, Select, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError, isStaleWrite } from '@/api/errors';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { absoluteTime } from '@/lib/format';
import { useFocusFirstInvalid } from '@/lib/useFocusFirstInvalid';
import { JudgeTools } from '../components/JudgeTools';
import { ParamsEditor, starterParams } from '../components/ParamsEditor';
import { ruleProblems } from '../components/RulesEditor';
import { useAddVersion, useCreateScorer, useScorer, useScorerKinds, type Params, type ScorerDetail, type ScorerKind } from '../hooks/useScorers';
import { unplacedErrors } from '../schema';

/** Create a scorer (/scorers/new) or save a new version of one (/scorers/:scorerId). */
export function ScorerEditorPage() {
  const { project } = useProjectOutlet();
  const raw = useParams().scorerId;
  const scorerId = raw && raw !== 'new' ? Number(raw) : null;
  const kinds = useScorerKinds(project.id);
  const scorer = useScorer(project.id, scorerId);
  const back = `/projects/${project.id}/scorers`;

  if (kinds.isPending || (scorerId !== null && scorer.isPending)) return <LoadingRows label="Loading the scorer" />;
  if (kinds.isError) return <ErrorState title="Could not load the scorer kinds" error={kinds.error} onRetry={() => kinds.refetch()} />;
  if (scorer.isError) {
    const missing = isApiError(scorer.error) && scorer.error.status === 404;
    return <ErrorState title={missing ? 'Scorer not found' : 'Could not load the scorer'} error={scorer.error} onRetry={() => scorer.refetch()} />;
  }
  return <Editor key={scorerId ?? 'new'} projectId={project.id} canEdit={roleAtLeast(project.role, 'editor')} kinds={kinds.data} scorer={scorer.data ?? null} back={back} />;
}

interface EditorProps {
  projectId: number;
  canEdit: boolean;
  kinds: ScorerKind[];
  scorer: ScorerDetail | null;
  back: string;
}

function Editor({ projectId, canEdit, kinds, scorer, back }: EditorProps) {
  const navigate = useNavigate();
  const create = useCreateScorer(projectId);
  const addVersion = useAddVersion(projectId);
  const queryClient = useQueryClient();
  const [name, setName] = useState(scorer?.name ?? '');
  const [description, setDescription] = useState(scorer?.description ?? '');
  const [kindName, setKindName] = useState(scorer?.kind ?? '');
  const [params, setParams] = useState<Params>(() => ({ ...(scorer?.latest.params ?? {}) }));
  const [note, setNote] = useState('');
  const { ref, focusFirstInvalid } = useFocusFirstInvalid<HTMLFormElement>();
  const mutation = scorer ? addVersion : create;
  const stale = isStaleWrite(addVersion.error) ? addVersion.error : null;
  const errors = fieldErrors(mutation.error);
  const problems = ruleProblems(isApiError(mutation.error) ? mutation.error.errors : undefined);
  const kind = kinds.find((k) => k.kind === kindName);
  const editing = scorer !== null;
  const readOnly = !canEdit || !!scorer?.archived_at;
  const blocked = !editing && kind && !kind.available;

  useEffect(() => {
    if (mutation.isError) focusFirstInvalid();
  }, [mutation.isError, mutation.error]); // eslint-disable-line react-hooks/exhaustive-deps

  function chooseKind(next: string) {
    setKindName(next);
    const found = kinds.find((k) => k.kind === next);
    setParams(found ? starterParams(found) : {});
    mutation.reset();
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const done = { onSuccess: () => navigate(back) };
    if (scorer) addVersion.mutate({ id: scorer.id, params, note: note || null, version: scorer.row_version }, done);
    else create.mutate({ name, kind: kindName, description: description || null, params, note: note || null }, done);
  }

  const shown = ['name', 'kind', 'description', 'note', ...Object.keys((kind?.params_schema as { properties?: object })?.properties ?? {}).map((p) => `params.${p}`)];
  const others = mutation.isError ? unplacedErrors(errors, shown) : [];

  return (
    <div className="space-y-4">
      <Link to={back} className="text-sm text-indigo-700 underline">
        ← All scorers
      </Link>
      <Card aria-labelledby="scorer-heading">
        <CardHeader>
          <div className="min-w-0 space-y-1">
            <CardTitle id="scorer-heading">{editing ? `Edit ${scorer.name}` : 'New scorer'}</CardTitle>
            <p className="text-sm text-zinc-600">
              {editing
                ? `Saving makes version ${scorer.latest.number + 1}; runs and scores keep the version they used.`
                : 'Choose what it checks; the settings come from the kind.'}
            </p>
          </div>
        </CardHeader>
        <CardContent>
          <form ref={ref} onSubmit={submit} noValidate className="space-y-5">
            <StaleWriteNotice
              error={stale}
              edit={JSON.stringify(params, null, 1)}
              onReload={() => {
                const newer = (stale?.current as ScorerDetail | undefined)?.latest.params;
                addVersion.reset();
                if (newer) setParams({ ...newer });
                void queryClient.invalidateQueries({ queryKey: ['project', projectId, 'scorers'] });
              }}
              onKeepMine={
                stale && scorer
                  ? () => addVersion.mutate({ id: scorer.id, params, note: note || null, version: stale.currentVersion }, { onSuccess: () => navigate(back) })
                  : undefined
              }
              keeping={addVersion.isPending}
            />
            {mutation.isError && !stale && <Alert>{errorMessage(mutation.error)}</Alert>}
            {others.length > 0 && (
              <ul className="list-disc space-y-1 pl-5 text-sm text-red-700">
                {others.map((o) => (
                  <li key={o}>{o}</li>
                ))}
              </ul>
            )}
            {scorer?.archived_at && <Alert>This scorer is archived: restore it to save a new version.</Alert>}
            <div className="grid gap-4 sm:grid-cols-2">
              <Field id="scorer-name" label="Name" error={errors.name}>
                <Input id="scorer-name" value={name} maxLength={100} disabled={editing || readOnly} invalid={!!errors.name} aria-describedby={describedBy('scorer-name', errors.name)} onChange={(e) => setName(e.target.value)} />
              </Field>
              <Field
                id="scorer-kind"
                label="Kind"
                error={errors.kind}
                hint={kind && (
                  <>
                    {kind.description} <span className="font-mono text-xs text-zinc-400">{kind.kind}</span>
                  </>
                )}
              >
                <Select id="scorer-kind" className="w-full" value={kindName} disabled={editing || readOnly} aria-invalid={!!errors.kind || undefined} aria-describedby={describedBy('scorer-kind', errors.kind, !!kind)} onChange={(e) => chooseKind(e.target.value)}>
                  <option value="">Choose a kind…</option>
                  {kinds.map((k) => (
                    <option key={k.kind} value={k.kind} disabled={!k.available}>
                      {k.name}
                      {k.mode !== 'automatic' ? ` (${k.mode})` : ''}
                      {k.available ? '' : ' — not allowed in this project'}
                    </option>
                  ))}
                </Select>
              </Field>
            </div>
            {!editing && (
              <Field id="scorer-description" label={<>Description <span className="font-normal text-zinc-500">(optional)</span></>} error={errors.description}>
                <Textarea id="scorer-description" className="min-h-16" value={description} disabled={readOnly} onChange={(e) => setDescription(e.target.value)} />
              </Field>
            )}
            {blocked && <Alert>{kind.unavailable_reason}</Alert>}
            {kind && !blocked && (
              <ParamsEditor projectId={projectId} kind={kind} value={params} onChange={setParams} errors={errors} problems={problems} disabled={readOnly} />
            )}
            <Field id="scorer-note" label={<>Version note <span className="font-normal text-zinc-500">(optional)</span></>} error={errors.note}>
              <Input id="scorer-note" value={note} maxLength={500} disabled={readOnly} onChange={(e) => setNote(e.target.value)} />
            </Field>
            <div className="flex flex-wrap gap-2">
              {canEdit && (
                <Button type="submit" loading={mutation.isPending} disabled={readOnly || !kind || !!blocked}>
                  {editing ? 'Save new version' : 'Create scorer'}
                </Button>
              )}
              <Link to={back} className={buttonClasses('secondary')}>
                Cancel
              </Link>
            </div>
          </form>
        </CardContent>
      </Card>
      {kind && !blocked && kind.mode !== 'manual' && (canEdit || kind.calls_judges) && (
        <JudgeTools projectId={projectId} kind={kind.kind} params={params} callsJudges={kind.calls_judges} pairwise={kind.mode === 'pairwise'} canTry={canEdit} />
      )}
      {scorer && <Versions scorer={scorer} />}
    </div>
  );
}

function Versions({ scorer }: { scorer: ScorerDetail }) {
  return (
    <section aria-labelledby="versions-heading" className="space-y-2">
      <h2 id="versions-heading" className="text-base font-semibold">
        Versions
      </h2>
      <ol className="space-y-1 text-sm">
        {scorer.versions.map((v) => (
          <li key={v.id} className="break-words">
            <span className="font-medium">v{v.number}</span> · {absoluteTime(v.created_at)}
            {v.note ? ` · ${v.note}` : ''}
          </li>
        ))}
      </ol>
    </section>
  );
}
