import { useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { buttonClasses, ErrorState, Skeleton } from '@/components/ui';
import { roleAtLeast } from '@/api/types';
import { useMe } from '@/features/auth/hooks/useAuth';
import { useProject } from '@/features/projects/hooks/useProjects';
import { OutputDialog } from '@/features/runs/components/OutputDialog';
import { useRun } from '@/features/runs/hooks/useRuns';
import { cn, focusRing } from '@/lib/cn';
import { NO_FILTERS, reviewPath, type GridCell, type GridFilters, type GridOutput, type GridRow } from '../api';
import { GridFiltersBar } from '../components/GridFilters';
import { ResultsGrid, type ActiveCell } from '../components/ResultsGrid';
import { isTyping, ScoringBar } from '../components/Scoring';
import { describeEntry, entryForKey, myScore, useManualScoring, useScoringChoices } from '../hooks/useGrid';

export const GRID_NAVIGATION: Array<[string, string]> = [
  ['← → ↑ ↓', 'Move between cells'],
  ['Home / End', 'First / last cell of the row'],
  ['Ctrl+Home / End', 'First / last cell of the grid'],
  ['PageUp / PageDown', 'Ten rows up / down'],
  ['Enter', 'Open the output (on a case: its side-by-side page)'],
];

/** A run's results grid, with sorting, filters and scoring by hand from the keyboard. */
export function ResultsPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const runId = Number(params.runId);
  const project = useProject(projectId);
  const run = useRun(projectId, runId);
  const me = useMe();
  const [filters, setFilters] = useState<GridFilters>(NO_FILTERS);
  const [active, setActive] = useState<ActiveCell>({ row: 0, col: 1 });
  const [expanded, setExpanded] = useState<number | null>(null);
  const [helpOpen, setHelpOpen] = useState(false);
  const canScore = roleAtLeast(project.data?.role, 'reviewer');
  const scoring = useScoringChoices(projectId, run.data);
  const [chosen, setChosen] = useState<number | null | undefined>(undefined);
  const versionId = chosen === undefined ? (scoring.choices[0]?.versionId ?? null) : chosen;
  const choice = scoring.choices.find((c) => c.versionId === versionId) ?? null;
  const userId = me.data?.id;
  const manual = useManualScoring(projectId, runId, userId);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target) || document.querySelector('[role="dialog"]')) return;
      if (e.key === '?') {
        e.preventDefault();
        setHelpOpen(true);
      } else if ((e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 'z') {
        e.preventDefault();
        void manual.undo();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [manual]);

  const targets = useMemo(() => (run.data?.targets ?? []).map((t) => ({ id: t.id, label: t.label })), [run.data]);
  const scorers = useMemo(() => (run.data?.scorers ?? []).map((s) => ({ id: s.scorer_id, name: s.name })), [run.data]);

  if (run.isPending) {
    return (
      <div role="status" aria-label="Loading run" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-96 w-full" />
      </div>
    );
  }
  if (run.isError) return <ErrorState title="Could not load the run" error={run.error} onRetry={() => run.refetch()} retrying={run.isFetching} />;
  const name = run.data.name || `Run #${runId}`;

  const onScoreKey = (key: string, row: GridRow, cell: GridCell): boolean => {
    if (!canScore || !choice) return false;
    const output = cell.outputs[0];
    const mine = output ? myScore(output, choice.versionId, userId) : null;
    const entry = entryForKey(key, choice.scale, mine ? { rating: mine.rating, passed: mine.passed } : null);
    if (!entry || !output) return false;
    if (output.status !== 'succeeded') {
      manual.refuse(`Not scored: this output is ${output.status}; only outputs with a reply take a score`);
      return true;
    }
    const label = targets.find((t) => t.id === cell.target_id)?.label ?? '';
    void manual.score({
      outputId: output.id,
      versionId: choice.versionId,
      before: mine ? { rating: mine.rating, passed: mine.passed } : null,
      version: mine?.row_version ?? 0,
      after: entry,
      label: `case #${row.number} · ${label}: ${describeEntry(entry)}`,
    });
    return true;
  };
  const describeScores = (o: GridOutput) => {
    if (!choice || !canScore) return null;
    const mine = myScore(o, choice.versionId, userId);
    return mine ? `You: ${describeEntry({ rating: mine.rating, passed: mine.passed })}` : null;
  };

  return (
    <div className="space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-600">
        <Link to={`/projects/${projectId}`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          {project.data?.name ?? 'Project'}
        </Link>{' '}
        /{' '}
        <Link to={`/projects/${projectId}/runs/${runId}`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          {name}
        </Link>{' '}
        / <span className="text-zinc-900">Results</span>
      </nav>
      <header className="flex flex-wrap items-center justify-between gap-3">
        <h1 className="text-xl font-semibold">Results · {name}</h1>
        <Link to={reviewPath(projectId, runId)} className={buttonClasses('secondary')}>
          Review one by one
        </Link>
      </header>
      <GridFiltersBar value={filters} onChange={(f) => { setFilters(f); setActive({ row: 0, col: Math.min(active.col, 1) }); }} targets={targets} scorers={scorers} />
      <ScoringBar
        choices={scoring.choices}
        versionId={versionId}
        onChoose={setChosen}
        canScore={canScore}
        loading={scoring.isPending}
        canUndo={manual.canUndo}
        onUndo={() => void manual.undo()}
        busy={manual.busy}
        error={manual.error}
        saved={manual.saved}
        stale={manual.stale}
        onReload={manual.dismissStale}
        navigation={GRID_NAVIGATION}
        helpOpen={helpOpen}
        onHelp={setHelpOpen}
      />
      <ResultsGrid
        projectId={projectId}
        runId={runId}
        filters={filters}
        active={active}
        onActiveChange={setActive}
        onExpand={(o) => setExpanded(o.id)}
        onScoreKey={onScoreKey}
        describeScores={describeScores}
      />
      <p className="text-sm text-zinc-600">
        Tab into the grid, then move with the arrow keys; press <kbd>?</kbd> for every shortcut.
      </p>
      <OutputDialog projectId={projectId} runId={runId} outputId={expanded} onClose={() => setExpanded(null)} />
    </div>
  );
}
