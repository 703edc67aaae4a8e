import { useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { Button, buttonClasses, Checkbox, EmptyState, ErrorState, Label, LoadingRows, Skeleton } from '@/components/ui';
import { roleAtLeast } from '@/api/types';
import { useMe } from '@/features/auth/hooks/useAuth';
import { useProject } from '@/features/projects/hooks/useProjects';
import { useRun } from '@/features/runs/hooks/useRuns';
import { cn, focusRing } from '@/lib/cn';
import { casePath, NO_FILTERS, resultsPath, type ManualScoreBody } from '../api';
import { ReviewInput, ReviewOutputs } from '../components/ReviewOutputs';
import { ReviewScorePanel } from '../components/ReviewScorePanel';
import { isTyping, ScoringBar } from '../components/Scoring';
import { beforeOf, reviewItems, sameBefore, scoredByMe, useItemDetails } from '../hooks/reviewItems';
import { describeEntry, entryForKey, GRID_PAGE_SIZE, gridPageQuery, myScore, useScoringChoices } from '../hooks/useGrid';
import { useReviewScoring } from '../hooks/useReviewScoring';

const REVIEW_NAVIGATION: Array<[string, string]> = [
  ['→ or J', 'Next output'],
  ['← or K', 'Previous output'],
  ['↑ / ↓', 'Previous / next criterion (scorers rated per criterion)'],
  ['Enter', 'Save the criteria rated so far, when each has a rating'],
  ['U', 'Only outputs unscored by me: on / off'],
];

interface Position {
  row: number; // the case's index in dataset order
  output: number; // the cell's index among the case's cells with a reply
}

/**
 * Focused review: one cell at a time, case by case, scored from the keyboard (`.` pass,
 * `,` fail, 1–5; per criterion with ↑ ↓ and 1–5), saved at once for every repeat of the
 * cell; a score moves on to the next cell, Ctrl/Cmd+Z (or Undo) takes the last one back and
 * returns to it, also after a reload. "Only unscored by me" skips what the reviewer scored.
 */
export function ReviewPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const runId = Number(params.runId);
  const project = useProject(projectId);
  const run = useRun(projectId, runId);
  const me = useMe();
  const userId = me.data?.id;
  const [pos, setPos] = useState<Position>({ row: 0, output: 0 });
  const [helpOpen, setHelpOpen] = useState(false);
  const [unscoredOnly, setUnscoredOnly] = useState(false);
  const [criterion, setCriterion] = useState(0);
  const [draft, setDraft] = useState<Record<string, number>>({});
  const direction = useRef<1 | -1>(1);
  // While a save is finishing, its own step forward is the only one: the skip below would
  // otherwise see the cell just scored as done and step too, landing one cell too far.
  const saving = useRef(false);
  const canScore = roleAtLeast(project.data?.role, 'reviewer');
  const scoring = useScoringChoices(projectId, run.data);
  const [chosen, setChosen] = useState<number | null | undefined>(undefined);
  const versionId = chosen === undefined ? (scoring.choices[0]?.versionId ?? null) : chosen;
  const choice = scoring.choices.find((c) => c.versionId === versionId) ?? null;
  const manual = useReviewScoring(projectId, runId, userId);

  const page = Math.floor(pos.row / GRID_PAGE_SIZE) + 1;
  const grid = useQuery(gridPageQuery(projectId, runId, NO_FILTERS, page));
  useQuery(gridPageQuery(projectId, runId, NO_FILTERS, page + 1, !!grid.data && page * GRID_PAGE_SIZE < grid.data.total));
  const total = grid.data?.total ?? 0;
  const labels = useMemo(() => new Map((grid.data?.targets ?? []).map((t) => [t.target_id, t.label])), [grid.data]);
  const row = grid.data?.rows[pos.row - (page - 1) * GRID_PAGE_SIZE];
  const items = reviewItems(row, labels);
  const index = Math.min(pos.output, Math.max(0, items.length - 1));
  const item = items[index];
  const details = useItemDetails(projectId, runId, item);
  const befores = item && choice ? item.outputs.map((o, i) => beforeOf(o, details[i]?.data, choice.versionId, userId)) : [];
  const mine = befores[0] ?? null;
  const mixed = befores.some((b) => !sameBefore(b, mine));
  const done = !!(item && choice && scoredByMe(item, choice.versionId, userId));

  // A new cell or scorer starts the criteria afresh.
  const here = `${pos.row}:${index}:${versionId}`;
  useEffect(() => {
    setCriterion(0);
    setDraft({});
  }, [here]);

  const go = (step: 1 | -1) => {
    direction.current = step;
    setPos((p) => {
      if (step === 1) {
        if (p.output + 1 < items.length) return { row: p.row, output: p.output + 1 };
        return p.row + 1 < total ? { row: p.row + 1, output: 0 } : p;
      }
      if (p.output > 0) return { row: p.row, output: p.output - 1 };
      if (p.row === 0) return p;
      const before = grid.data?.rows[p.row - 1 - (page - 1) * GRID_PAGE_SIZE];
      return { row: p.row - 1, output: Math.max(0, reviewItems(before, labels).length - 1) };
    });
  };

  // "Only unscored by me": step past cells the reviewer scored, the way they were going.
  useEffect(() => {
    if (!unscoredOnly || !row || manual.busy || saving.current) return;
    if (!item || done) go(direction.current);
  });

  const scoreWith = async (entry: ManualScoreBody | null) => {
    if (!entry || !choice || !item || !row || !canScore) return;
    const repeats = item.outputs.length;
    saving.current = true;
    try {
      const ok = await manual.score({
        versionId: choice.versionId,
        outputs: item.outputs.map((o, i) => ({ outputId: o.id, before: befores[i] ?? null, version: myScore(o, choice.versionId, userId)?.row_version ?? 0 })),
        after: entry,
        label: `case #${row.number} · ${item.label}${repeats > 1 ? ` (${repeats} repeats)` : ''}: ${entry.criteria ? Object.entries(entry.criteria).map(([k, v]) => `${k} ${v}`).join(', ') : describeEntry(entry)}`,
        row: pos.row,
        item: index,
      });
      if (ok) go(1);
    } finally {
      saving.current = false;
    }
  };
  const criteriaEntry = (next: Record<string, number>): ManualScoreBody | null => {
    if (!choice) return null;
    const full = Object.fromEntries(choice.criteria.map((c) => [c, next[c] ?? mine?.criteria[c]]));
    return Object.values(full).every((v) => v !== undefined) ? { criteria: full as Record<string, number> } : null;
  };
  const rate = (name: string, rating: number) => {
    if (!choice) return;
    const next = { ...draft, [name]: rating };
    setDraft(next);
    const at = choice.criteria.indexOf(name);
    const entry = criteriaEntry(next);
    if (at === choice.criteria.length - 1 && entry) void scoreWith(entry);
    else setCriterion(Math.min(at + 1, choice.criteria.length - 1));
  };
  // Turned on, the filter looks forward from here.
  const toggleUnscored = (on: boolean) => {
    direction.current = 1;
    setUnscoredOnly(on);
  };
  const undo = async () => {
    const undone = await manual.undo();
    if (undone) {
      direction.current = 1;
      setUnscoredOnly(false);
      setPos({ row: undone.row, output: undone.item });
    }
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
    const perCriterion = choice?.scale === 'criteria';
    if (e.key === '?') {
      e.preventDefault();
      setHelpOpen(true);
    } else if (e.key === 'ArrowRight' || e.key === 'j') {
      e.preventDefault();
      go(1);
    } else if (e.key === 'ArrowLeft' || e.key === 'k') {
      e.preventDefault();
      go(-1);
    } else if (e.key === 'u' || e.key === 'U') {
      e.preventDefault();
      toggleUnscored(!unscoredOnly);
    } else if (perCriterion && (e.key === 'ArrowDown' || e.key === 'ArrowUp') && choice) {
      e.preventDefault();
      setCriterion((c) => Math.max(0, Math.min(choice.criteria.length - 1, c + (e.key === 'ArrowDown' ? 1 : -1))));
    } else if (canScore && choice && item && !manual.busy) {
      if (perCriterion && /^[1-5]$/.test(e.key)) {
        e.preventDefault();
        rate(choice.criteria[criterion], Number(e.key));
      } else if (perCriterion && e.key === 'Enter') {
        const entry = criteriaEntry(draft);
        if (entry) {
          e.preventDefault();
          void scoreWith(entry);
        }
      } else if (!perCriterion) {
        const entry = entryForKey(e.key, choice.scale, mine ? { rating: mine.rating, passed: mine.passed } : null);
        if (entry) {
          e.preventDefault();
          void scoreWith(entry);
        }
      }
    }
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => handler.current(e);
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

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
  const first = details[0]?.data;
  const repeats = item?.outputs.length ?? 0;

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
        stale={manual.stale}
        onReload={manual.dismissStale}
        navigation={REVIEW_NAVIGATION}
        helpOpen={helpOpen}
        onHelp={setHelpOpen}
        criteriaByKeys
      />
      {total === 0 ? (
        <EmptyState title="Nothing to review" description="This run has no cases." />
      ) : (
        <section aria-labelledby="review-heading" className="space-y-4 rounded-xl border border-zinc-200 bg-white p-4">
          <div className="flex flex-wrap items-center justify-between gap-3">
            <h2 id="review-heading" className="text-lg font-semibold" data-testid="review-position">
              Case {pos.row + 1} of {total}
              {items.length > 0 && ` · output ${index + 1} of ${items.length}: ${item?.label ?? ''}`}
              {repeats > 1 && ` · ${repeats} repeats`}
            </h2>
            <div className="flex flex-wrap items-center gap-2">
              <span className="flex items-center gap-2">
                <Checkbox id="review-unscored" checked={unscoredOnly} onChange={(e) => toggleUnscored(e.target.checked)} disabled={!choice} aria-keyshortcuts="U" />
                <Label htmlFor="review-unscored" className="font-normal">
                  Only unscored by me
                </Label>
              </span>
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
          {unscoredOnly && done && (
            <p className="rounded-xl border border-emerald-200 bg-emerald-50 p-2 text-sm text-emerald-900" data-testid="all-scored">
              You have scored every output {direction.current === 1 ? 'from here to the end' : 'from here back to the start'} with {choice?.name}. Press {direction.current === 1 ? '←' : '→'} or turn the filter off to see the others.
            </p>
          )}
          {!row ? (
            <LoadingRows label="Loading the case" rows={3} />
          ) : !item ? (
            <p className="text-zinc-700">No output of this case has a reply to score (they failed or were skipped). Press → for the next case.</p>
          ) : (
            <div className="grid gap-4 lg:grid-cols-2">
              <ReviewInput row={row} detail={first} />
              <div className="space-y-3">
                <ReviewOutputs item={item} details={details.map((d) => d.data)} userId={userId} />
                {canScore && choice && (
                  <ReviewScorePanel
                    choice={choice}
                    mine={mine}
                    mixed={mixed}
                    repeats={repeats}
                    criterion={criterion}
                    draft={draft}
                    onCriterion={setCriterion}
                    onRate={rate}
                    onSaveCriteria={() => void scoreWith(criteriaEntry(draft))}
                    onScore={(entry) => void scoreWith(entry)}
                  />
                )}
              </div>
            </div>
          )}
        </section>
      )}
    </div>
  );
}
