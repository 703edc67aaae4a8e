import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { Badge, Button, buttonClasses, EmptyState, ErrorState, LoadingRows, Skeleton } from '@/components/ui';
import { roleAtLeast } from '@/api/types';
import { useMe } from '@/features/auth/hooks/useAuth';
import { useProject } from '@/features/projects/hooks/useProjects';
import { useOutputDetail, useRun } from '@/features/runs/hooks/useRuns';
import { formatMicros } from '@/lib/money';
import { cn, focusRing } from '@/lib/cn';
import { casePath, formatScore, NO_FILTERS, resultsPath, type GridOutput, type GridRow, type ManualScoreBody } from '../api';
import { isTyping, ScoringBar } from '../components/Scoring';
import { describeEntry, entryForKey, GRID_PAGE_SIZE, gridPageQuery, myScore, useManualScoring, useScoringChoices, type ScoringChoice } from '../hooks/useGrid';

const REVIEW_NAVIGATION: Array<[string, string]> = [
  ['→ or J', 'Next output'],
  ['← or K', 'Previous output'],
];

interface Position {
  row: number; // the case's index in dataset order
  output: number; // the output's index among the case's outputs with a reply
}

const pretty = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** The outputs of a case that can be scored (they have a reply), with their target's label. */
function scoreable(row: GridRow | undefined, labels: Map<number, string>): Array<{ output: GridOutput; label: string }> {
  if (!row) return [];
  return row.cells.flatMap((c) => c.outputs.filter((o) => o.status === 'succeeded').map((o) => ({ output: o, label: labels.get(c.target_id) ?? '' })));
}

/**
 * Focused review: one output at a time, case by case, scored from the keyboard (`.` pass,
 * `,` fail, 1–5), saved at once; a score moves on to the next output, Ctrl/Cmd+Z (or Undo)
 * takes the last one back and returns to it.
 */
export function ReviewPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const runId = Number(params.runId);
  const project = useProject(projectId);
  const run = useRun(projectId, runId);
  const me = useMe();
  const [pos, setPos] = useState<Position>({ row: 0, output: 0 });
  const [helpOpen, setHelpOpen] = useState(false);
  const canScore = roleAtLeast(project.data?.role, 'reviewer');
  const scoring = useScoringChoices(projectId, run.data);
  const [chosen, setChosen] = useState<number | null | undefined>(undefined);
  const versionId = chosen === undefined ? (scoring.choices[0]?.versionId ?? null) : chosen;
  const choice = scoring.choices.find((c) => c.versionId === versionId) ?? null;
  const manual = useManualScoring(projectId, runId);
  const where = useRef(new Map<number, Position>());

  const page = Math.floor(pos.row / GRID_PAGE_SIZE) + 1;
  const grid = useQuery(gridPageQuery(projectId, runId, NO_FILTERS, page));
  const nextPage = useQuery(gridPageQuery(projectId, runId, NO_FILTERS, page + 1, !!grid.data && page * GRID_PAGE_SIZE < grid.data.total));
  const total = grid.data?.total ?? 0;
  const labels = useMemo(() => new Map((grid.data?.targets ?? []).map((t) => [t.target_id, t.label])), [grid.data]);
  const row = grid.data?.rows[pos.row - (page - 1) * GRID_PAGE_SIZE];
  const items = scoreable(row, labels);
  const item = items[Math.min(pos.output, Math.max(0, items.length - 1))];
  const detail = useOutputDetail(projectId, runId, item?.output.id ?? null);

  const go = (step: 1 | -1) => {
    setPos((p) => {
      if (step === 1) {
        if (p.output + 1 < items.length) return { row: p.row, output: p.output + 1 };
        return p.row + 1 < total ? { row: p.row + 1, output: 0 } : p;
      }
      if (p.output > 0) return { row: p.row, output: p.output - 1 };
      // The previous case's last output, when its page is loaded; else its first.
      if (p.row === 0) return p;
      const before = grid.data?.rows[p.row - 1 - (page - 1) * GRID_PAGE_SIZE];
      return { row: p.row - 1, output: Math.max(0, scoreable(before, labels).length - 1) };
    });
  };

  const scoreWith = async (entry: ManualScoreBody | null, c: ScoringChoice | null) => {
    if (!entry || !c || !item || !row) return;
    const mine = myScore(item.output, c.versionId, me.data?.id);
    where.current.set(item.output.id, pos);
    const ok = await manual.score({
      outputId: item.output.id,
      versionId: c.versionId,
      before: mine ? { rating: mine.rating, passed: mine.passed } : null,
      after: entry,
      label: `case #${row.position + 1} · ${item.label}: ${describeEntry(entry)}`,
    });
    if (ok) go(1);
  };
  const undo = async () => {
    const undone = await manual.undo();
    const back = undone ? where.current.get(undone.outputId) : undefined;
    if (back) setPos(back);
  };
  const current = () => {
    if (!item || !choice) return null;
    const mine = myScore(item.output, choice.versionId, me.data?.id);
    return mine ? { rating: mine.rating, passed: mine.passed } : null;
  };

  const handler = useRef<(e: KeyboardEvent) => void>(() => {});
  handler.current = (e: KeyboardEvent) => {
    if (isTyping(e.target) || document.querySelector('[role="dialog"]') || e.altKey) return;
    const ctrl = e.ctrlKey || e.metaKey;
    if (ctrl && !e.shiftKey && e.key.toLowerCase() === 'z') {
      e.preventDefault();
      void undo();
      return;
    }
    if (ctrl) return;
    if (e.key === '?') {
      e.preventDefault();
      setHelpOpen(true);
    } else if (e.key === 'ArrowRight' || e.key === 'j') {
      e.preventDefault();
      go(1);
    } else if (e.key === 'ArrowLeft' || e.key === 'k') {
      e.preventDefault();
      go(-1);
    } else if (canScore && choice && !manual.busy) {
      const entry = entryForKey(e.key, choice.scale, current());
      if (entry) {
        e.preventDefault();
        void scoreWith(entry, choice);
      }
    }
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => handler.current(e);
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  void nextPage;

  if (run.isPending || grid.isPending) {
    return (
      <div role="status" aria-label="Loading the review" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-96 w-full" />
      </div>
    );
  }
  if (run.isError) return <ErrorState title="Could not load the run" error={run.error} onRetry={() => run.refetch()} />;
  if (grid.isError) return <ErrorState title="Could not load the outputs" error={grid.error} onRetry={() => grid.refetch()} />;
  const name = run.data.name || `Run #${runId}`;
  const mine = current();
  const o = detail.data;

  return (
    <div className="space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-600">
        <Link to={`/projects/${projectId}/runs/${runId}`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          {name}
        </Link>{' '}
        /{' '}
        <Link to={resultsPath(projectId, runId)} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          Results
        </Link>{' '}
        / <span className="text-zinc-900">Review</span>
      </nav>
      <h1 className="text-xl font-semibold">Review · {name}</h1>
      <ScoringBar
        choices={scoring.choices}
        versionId={versionId}
        onChoose={setChosen}
        canScore={canScore}
        loading={scoring.isPending}
        canUndo={manual.canUndo}
        onUndo={() => void undo()}
        busy={manual.busy}
        error={manual.error}
        saved={manual.saved}
        navigation={REVIEW_NAVIGATION}
        helpOpen={helpOpen}
        onHelp={setHelpOpen}
      />
      {total === 0 ? (
        <EmptyState title="Nothing to review" description="This run has no cases." />
      ) : (
        <section aria-labelledby="review-heading" className="space-y-4 rounded-xl border border-zinc-200 bg-white p-4">
          <div className="flex flex-wrap items-center justify-between gap-3">
            <h2 id="review-heading" className="text-lg font-semibold" data-testid="review-position">
              Case {pos.row + 1} of {total}
              {items.length > 0 && ` · output ${Math.min(pos.output, items.length - 1) + 1} of ${items.length}: ${item?.label ?? ''}`}
            </h2>
            <div className="flex gap-2">
              <Button type="button" variant="secondary" size="sm" onClick={() => go(-1)} disabled={pos.row === 0 && pos.output === 0} aria-keyshortcuts="ArrowLeft">
                ← Previous
              </Button>
              <Button type="button" variant="secondary" size="sm" onClick={() => go(1)} aria-keyshortcuts="ArrowRight" disabled={pos.row + 1 >= total && pos.output + 1 >= items.length}>
                Next →
              </Button>
              {row && (
                <Link to={casePath(projectId, runId, row.case_id)} className={buttonClasses('ghost', 'sm')}>
                  Side by side
                </Link>
              )}
            </div>
          </div>
          {!row ? (
            <LoadingRows label="Loading the case" rows={3} />
          ) : !item ? (
            <p className="text-zinc-700">No output of this case has a reply to score (they failed or were skipped). Press → for the next case.</p>
          ) : (
            <div className="grid gap-4 lg:grid-cols-2">
              <div className="space-y-3">
                <Block title="Input" value={o ? o.case_input : row.input} />
                {o?.case_expected && <Block title="Expected" value={o.case_expected} />}
              </div>
              <div className="space-y-3">
                <p className="flex flex-wrap gap-2 text-sm text-zinc-600">
                  {item.output.latency_ms != null && <span>{item.output.latency_ms} ms</span>}
                  {item.output.tokens_out != null && <span>{(item.output.tokens_in ?? 0) + item.output.tokens_out} tokens</span>}
                  {item.output.cost_micros != null && <span>{formatMicros(item.output.cost_micros)}</span>}
                </p>
                <Block title={`Output · ${item.label}`} value={o?.text ?? item.output.text} testId="review-output" />
                <div className="space-y-1 text-sm">
                  <h3 className="font-medium text-zinc-900">Scores</h3>
                  {item.output.scores.length === 0 ? (
                    <p className="text-zinc-600">None yet.</p>
                  ) : (
                    <ul className="space-y-1" data-testid="review-scores">
                      {item.output.scores.map((s) => (
                        <li key={s.id}>
                          <Badge tone={s.passed === true ? 'success' : s.passed === false ? 'danger' : 'neutral'}>
                            {s.scorer_name} {s.kind === 'manual' && s.rating != null ? `${s.rating}/5` : formatScore(s.value)}
                            {s.passed === true ? ' ✓' : s.passed === false ? ' ✗' : ''}
                          </Badge>{' '}
                          {s.kind === 'manual' && s.author_id === me.data?.id ? 'you' : ''} {s.rationale}
                        </li>
                      ))}
                    </ul>
                  )}
                </div>
                {canScore && choice && choice.scale !== 'criteria' && (
                  <div className="space-y-2">
                    <p className="text-sm text-zinc-700" data-testid="my-score">
                      Your score ({choice.name}): {mine ? describeEntry({ rating: mine.rating, passed: mine.passed }) : 'none yet'}
                    </p>
                    <div className="flex flex-wrap gap-2" role="group" aria-label="Score this output">
                      <Button type="button" size="sm" onClick={() => void scoreWith(entryForKey('.', choice.scale, mine), choice)} aria-keyshortcuts=".">
                        Pass (.)
                      </Button>
                      <Button type="button" size="sm" variant="danger" onClick={() => void scoreWith(entryForKey(',', choice.scale, mine), choice)} aria-keyshortcuts=",">
                        Fail (,)
                      </Button>
                      {choice.scale === '1-5' &&
                        [1, 2, 3, 4, 5].map((n) => (
                          <Button key={n} type="button" size="sm" variant="secondary" onClick={() => void scoreWith(entryForKey(String(n), choice.scale, mine), choice)} aria-keyshortcuts={String(n)} aria-label={`Rate ${n}`}>
                            {n}
                          </Button>
                        ))}
                    </div>
                  </div>
                )}
              </div>
            </div>
          )}
        </section>
      )}
    </div>
  );
}

function Block({ title, value, testId }: { title: string; value: unknown; testId?: string }) {
  return (
    <section className="space-y-1">
      <h3 className="text-sm font-medium text-zinc-900">{title}</h3>
      <pre data-testid={testId} className="max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-zinc-50 p-3 text-sm">
        {pretty(value)}
      </pre>
    </section>
  );
}
