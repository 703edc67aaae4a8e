import { useEffect, useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Badge, buttonClasses, Card, Checkbox, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { cn } from '@/lib/cn';
import { casePath, labelledOutputs, useCaseView, type CaseView } from '../api';
import { OutputCard } from '../components/OutputCard';
import { OutputDiff } from '../components/OutputDiff';
import { TraceView } from '../components/TraceView';
import { conversationOf, findingsOf, type TraceMessage } from '../evidence';
import { sourceChunkIds, sourceTurns, type RetrievedChunk } from '@/features/runs/rag/context';
import { useDocumentNames } from '@/features/runs/rag/useDocumentNames';

const pretty = (v: unknown) => (v == null ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** j or ] for the next case, k or [ for the previous one (not while typing). */
function useCaseKeys(prev: string | null, next: string | null) {
  const navigate = useNavigate();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented || typing(e.target)) return;
      const to = e.key === 'j' || e.key === ']' ? next : e.key === 'k' || e.key === '[' ? prev : null;
      if (to) {
        e.preventDefault();
        navigate(to);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [navigate, prev, next]);
}

/**
 * The chunks the case's ground truth was generated from, per turn, each marked with the answers
 * that were given it (overlap of retrieval with the source), or as retrieved by none.
 */
function GroundTruthSources({ view, documentName }: { view: CaseView; documentName: (id: number) => string }) {
  const expected = view.case.expected;
  const turns = sourceTurns(expected);
  const lists = Array.from({ length: turns }, (_, turn) => ({ turn, ids: sourceChunkIds(expected, turn) ?? [] })).filter((l) => l.ids.length);
  if (!lists.length) return null;
  const byChunk = new Map<number, { chunk: RetrievedChunk; by: Set<string> }>();
  for (const t of view.targets) {
    for (const o of t.outputs) {
      for (const c of o.retrieved ?? []) {
        const entry = byChunk.get(c.chunk_id) ?? { chunk: c, by: new Set<string>() };
        if (sourceChunkIds(expected, o.turn)?.includes(c.chunk_id)) entry.by.add(t.label || 'Target');
        byChunk.set(c.chunk_id, entry);
      }
    }
  }
  return (
    <section aria-labelledby="truth-sources-heading" data-testid="truth-sources">
      <h3 id="truth-sources-heading" className="text-sm font-medium text-zinc-900">
        Ground truth drawn from
      </h3>
      {lists.map(({ turn, ids }) => (
        <div key={turn} className="mt-1">
          {turns > 1 && <p className="text-xs font-medium text-zinc-600">Turn {turn + 1}</p>}
          <ul className="space-y-1">
            {ids.map((id) => {
              const found = byChunk.get(id);
              const by = found ? [...found.by] : [];
              return (
                <li key={id} className={cn('min-w-0 rounded-lg border p-2 text-sm', by.length ? 'border-emerald-400 bg-emerald-50' : 'border-zinc-200 bg-zinc-50')}>
                  <p className="text-xs text-zinc-700">
                    {found ? (
                      <>
                        <span className="break-all font-medium text-zinc-900">{documentName(found.chunk.document_id)}</span> · chunk {found.chunk.position + 1}
                      </>
                    ) : (
                      <span className="font-medium text-zinc-900">Chunk id {id}</span>
                    )}
                    {' · '}
                    {by.length ? <span className="text-emerald-800">retrieved for {by.join(', ')}</span> : <span className="text-amber-800">retrieved for no answer</span>}
                  </p>
                  {found && <p className="mt-1 line-clamp-3 whitespace-pre-wrap break-words text-zinc-900">{found.chunk.text}</p>}
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </section>
  );
}

function CaseInput({ view, documentName }: { view: CaseView; documentName: (id: number) => string }) {
  const c = view.case;
  const input = c.input as Record<string, unknown>;
  const messages = Array.isArray(input.messages) ? (input.messages as TraceMessage[]) : null;
  return (
    <Card>
      <CardHeader>
        <CardTitle>Input</CardTitle>
      </CardHeader>
      <CardContent className="space-y-3">
        {(c.tags.length > 0 || c.difficulty) && (
          <p className="flex flex-wrap items-center gap-2 text-sm text-zinc-700">
            {c.tags.map((t) => (
              <Badge key={t}>{t}</Badge>
            ))}
            {c.difficulty && <span>Difficulty: {c.difficulty}</span>}
          </p>
        )}
        {view.dataset_kind === 'traces' ? (
          <p className="text-sm text-zinc-700">A recorded trace: its messages are shown below with the scorers’ evidence.</p>
        ) : messages ? (
          <TraceView messages={messages} findings={[]} idPrefix="input" hideEvidenceNav />
        ) : (
          <dl className="space-y-2">
            {Object.entries(input).map(([k, v]) => (
              <div key={k}>
                <dt className="text-sm font-medium text-zinc-900">{k}</dt>
                <dd className="whitespace-pre-wrap break-words rounded-lg border border-zinc-200 bg-zinc-50 p-2 text-sm text-zinc-900">{pretty(v)}</dd>
              </div>
            ))}
          </dl>
        )}
        {c.expected != null && (
          <section>
            <h3 className="text-sm font-medium text-zinc-900">Expected output</h3>
            <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap break-words rounded-lg border border-zinc-200 bg-zinc-50 p-2 text-sm text-zinc-900">
              {pretty((c.expected as { output?: unknown }).output ?? c.expected)}
            </pre>
          </section>
        )}
        <GroundTruthSources view={view} documentName={documentName} />
      </CardContent>
    </Card>
  );
}

/** The conversations scorers pointed into: the trace of a trace case, else each output's. */
function Evidence({ view }: { view: CaseView }) {
  const sections = useMemo(() => {
    if (view.dataset_kind === 'traces') {
      const outputs = view.targets.flatMap((t) => t.outputs);
      const messages = conversationOf(view, null);
      return messages ? [{ key: 'trace', title: 'Trace', messages, findings: findingsOf(outputs.flatMap((o) => o.scores)) }] : [];
    }
    return labelledOutputs(view).flatMap(({ key, label, output }) => {
      const findings = findingsOf(output.scores);
      const messages = findings.length ? ((output.conversation as TraceMessage[] | null) ?? conversationOf(view, output.text)) : null;
      return messages ? [{ key, title: `Conversation with ${label}`, messages, findings }] : [];
    });
  }, [view]);
  if (!sections.length) return null;
  return (
    <>
      {sections.map((s) => (
        <Card key={s.key}>
          <CardHeader>
            <CardTitle>{s.title}</CardTitle>
          </CardHeader>
          <CardContent>
            <TraceView messages={s.messages} findings={s.findings} idPrefix={`ev-${s.key}`} />
          </CardContent>
        </Card>
      ))}
    </>
  );
}

/**
 * One case of a run side by side (edison FR-RV-002): its input and expected output, every
 * target's outputs next to each other with scores, a diff between any two outputs, the
 * trace with the scorers' evidence, and previous/next navigation (buttons, j/k, [ ]).
 */
export function CaseViewPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const runId = Number(params.runId);
  const caseId = Number(params.caseId);
  const query = useCaseView(projectId, runId, caseId);
  const view = query.data;
  const prev = view?.previous_case_id != null ? casePath(projectId, runId, view.previous_case_id) : null;
  const next = view?.next_case_id != null ? casePath(projectId, runId, view.next_case_id) : null;
  useCaseKeys(prev, next);
  const outputs = useMemo(() => (view ? labelledOutputs(view) : []), [view]);
  // Targets hidden from the side-by-side columns (kept across cases of the run).
  const [hidden, setHidden] = useState<ReadonlySet<number>>(new Set());
  const fromDocuments = !!view?.targets.some((t) => t.outputs.some((o) => o.retrieved));
  const documentName = useDocumentNames(projectId, fromDocuments);
  const runLink = `/projects/${projectId}/runs/${runId}`;

  if (query.isPending) {
    return (
      <div role="status" aria-label="Loading the case" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  }
  if (query.isError) {
    if (isApiError(query.error) && query.error.status === 404) {
      return (
        <EmptyState
          title="Case not found in this run"
          description={query.error.message}
          action={
            <Link to={runLink} className={buttonClasses('secondary')}>
              Back to the run
            </Link>
          }
        />
      );
    }
    return <ErrorState title="Could not load the case" error={query.error} onRetry={() => query.refetch()} retrying={query.isFetching} />;
  }
  const v = query.data;
  const stale = v.case.id !== caseId; // the previous case, shown while the next one loads
  const shown = v.targets.filter((t) => !hidden.has(t.target_id));
  return (
    <div className="space-y-4" aria-busy={stale || undefined}>
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link to={runLink} className="rounded text-indigo-600 hover:text-indigo-700 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500">
          ← Back to run {v.run_name}
        </Link>
      </nav>
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold text-zinc-900">
          Case {v.position} of {v.total}
        </h1>
        <span className="text-sm text-zinc-600">case #{v.position}</span>
        <div className="ml-auto flex items-center gap-2">
          {prev ? (
            <Link to={prev} className={buttonClasses('secondary', 'sm')} aria-keyshortcuts="k [">
              ← Previous case
            </Link>
          ) : (
            <span className={cn(buttonClasses('secondary', 'sm'), 'cursor-not-allowed opacity-60')} aria-disabled="true">
              ← Previous case
            </span>
          )}
          {next ? (
            <Link to={next} className={buttonClasses('secondary', 'sm')} aria-keyshortcuts="j ]">
              Next case →
            </Link>
          ) : (
            <span className={cn(buttonClasses('secondary', 'sm'), 'cursor-not-allowed opacity-60')} aria-disabled="true">
              Next case →
            </span>
          )}
        </div>
      </header>
      <p className="text-sm text-zinc-600">
        Keys: <kbd className="rounded border border-zinc-300 px-1">j</kbd> or <kbd className="rounded border border-zinc-300 px-1">]</kbd> next case,{' '}
        <kbd className="rounded border border-zinc-300 px-1">k</kbd> or <kbd className="rounded border border-zinc-300 px-1">[</kbd> previous.
      </p>
      <CaseInput view={v} documentName={documentName} />
      <section aria-labelledby="outputs-heading" className="space-y-2">
        <h2 id="outputs-heading" className="text-base font-semibold text-zinc-900">
          Outputs side by side
        </h2>
        {v.targets.length > 2 && (
          <fieldset className="flex flex-wrap items-center gap-x-4 gap-y-1 text-sm text-zinc-800">
            <legend className="sr-only">Targets shown</legend>
            <span aria-hidden="true" className="font-medium text-zinc-900">
              Show:
            </span>
            {v.targets.map((t) => (
              <label key={t.target_id} className="inline-flex items-center gap-1.5">
                <Checkbox
                  checked={!hidden.has(t.target_id)}
                  onChange={(e) => {
                    const next = new Set(hidden);
                    if (e.target.checked) next.delete(t.target_id);
                    else next.add(t.target_id);
                    setHidden(next);
                  }}
                />
                {t.label || 'Target'}
              </label>
            ))}
          </fieldset>
        )}
        {v.targets.length === 0 ? (
          <EmptyState title="This run has no targets" />
        ) : shown.length === 0 ? (
          <EmptyState title="Every target is hidden" description="Tick a target above to show its outputs." />
        ) : (
          <div className="overflow-x-auto pb-2">
          <div className="grid gap-4" style={{ gridTemplateColumns: `repeat(${Math.min(shown.length, 4)}, minmax(16rem, 1fr))` }} data-testid="side-by-side">
            {shown.map((t) => {
              const shape = { turns: t.outputs.some((o) => o.turn > 0), repeats: t.outputs.some((o) => o.repeat > 0) };
              return (
                <section key={t.target_id} aria-label={t.label} className="min-w-0 space-y-2 rounded-xl border border-zinc-200 bg-white p-3">
                  <h3 className="text-base font-semibold text-zinc-900">{t.label || 'Target'}</h3>
                  {t.outputs.length === 0 ? (
                    <p className="text-sm text-zinc-600">No output for this case.</p>
                  ) : (
                    t.outputs.map((o) => {
                      const detail = [shape.turns ? `turn ${o.turn + 1}` : '', shape.repeats ? `repeat ${o.repeat + 1}` : ''].filter(Boolean).join(' · ');
                      return (
                        <OutputCard
                          key={o.id}
                          output={o}
                          label={[t.label || 'Target', detail].filter(Boolean).join(' · ')}
                          detail={detail}
                          documentName={documentName}
                          sourceIds={sourceChunkIds(v.case.expected, o.turn)}
                        />
                      );
                    })
                  )}
                </section>
              );
            })}
          </div>
          </div>
        )}
      </section>
      {outputs.length > 1 && (
        <Card>
          <CardHeader>
            <CardTitle>Compare two outputs</CardTitle>
          </CardHeader>
          <CardContent>
            <OutputDiff outputs={outputs} />
          </CardContent>
        </Card>
      )}
      <Evidence view={v} />
    </div>
  );
}
