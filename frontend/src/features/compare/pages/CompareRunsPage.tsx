import { useEffect, useMemo } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { Alert, Button, Card, CardContent, EmptyState, ErrorState, Label, LoadingRows, Select } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { roleAtLeast } from '@/api/types';
import { useProject } from '@/features/projects/hooks/useProjects';
import { useDatasets } from '@/features/runs/hooks/useRuns';
import type { Run } from '@/features/runs/api';
import { PairwiseSection } from '@/features/runs/scoring/PairwiseSection';
import { cn, focusRing } from '@/lib/cn';
import { OUTCOMES, type Outcome } from '../api';
import { useRunChoices, useRunDiff } from '../hooks';
import { DiffCounters } from '../components/DiffCounters';
import { MissesList } from '../components/MissesList';
import { PairedVerdict } from '../components/PairedVerdict';
import { StoppedRunsNote } from '../components/StoppedRunsNote';
import { TargetsTable } from '../components/TargetsTable';

export const runName = (r: Pick<Run, 'id' | 'name'>) => r.name || `Run #${r.id}`;

function numberParam(v: string | null): number | null {
  const n = Number(v);
  return v && Number.isInteger(n) && n > 0 ? n : null;
}

/** The newest other run on the same dataset, older than `head` when there is one. */
export function defaultBase(runs: Run[], head: Run): Run | undefined {
  const same = runs.filter((r) => r.id !== head.id && r.dataset_id === head.dataset_id);
  return same.find((r) => r.id < head.id) ?? same[0];
}

/**
 * Two runs of a project side by side (evalarena §6 diff): what the head run fixed,
 * regressed and newly failed against the base run, the paired verdict with its interval,
 * and the misses list, each entry linking to the case.
 */
export function CompareRunsPage() {
  const params = useParams();
  const projectId = Number(params.projectId);
  const [search, setSearch] = useSearchParams();
  const headId = numberParam(search.get('head'));
  const baseId = numberParam(search.get('base'));
  const scorerParam = search.get('scorer');
  const outcome = (OUTCOMES as readonly string[]).includes(search.get('outcome') ?? '') ? (search.get('outcome') as Outcome) : '';
  const page = numberParam(search.get('page')) ?? 1;

  const project = useProject(projectId);
  const choices = useRunChoices(projectId);
  const datasets = useDatasets(projectId);
  const runs = useMemo(() => choices.data?.items ?? [], [choices.data]);
  const head = runs.find((r) => r.id === headId);
  const base = runs.find((r) => r.id === baseId);
  const datasetName = (id: number) => datasets.data?.items.find((d) => d.id === id)?.name ?? `Dataset #${id}`;

  const update = (changes: Record<string, string | number | null>) => {
    setSearch(
      (prev) => {
        const next = new URLSearchParams(prev);
        for (const [k, v] of Object.entries(changes)) {
          if (v === null || v === '') next.delete(k);
          else next.set(k, String(v));
        }
        return next;
      },
      { replace: true },
    );
  };

  // Fill what is missing: the newest run as head, the run before it on the same dataset as base.
  useEffect(() => {
    if (!runs.length) return;
    const h = headId ? runs.find((r) => r.id === headId) : runs[0];
    if (!h) return;
    const changes: Record<string, number> = {};
    if (!headId) changes.head = h.id;
    if (!baseId) {
      const b = defaultBase(runs, h);
      if (b) changes.base = b.id;
    }
    if (Object.keys(changes).length) update(changes);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runs, headId, baseId]);

  // Verdicts from a scorer both runs applied (the head's first one by default), else from the outputs' status.
  const sharedScorers = useMemo(() => {
    if (!head) return [];
    const inBase = new Set((base?.scorers ?? []).map((s) => s.scorer_id));
    const seen = new Set<number>();
    return head.scorers.filter((s) => {
      if (seen.has(s.scorer_id)) return false;
      seen.add(s.scorer_id);
      return !base || inBase.has(s.scorer_id);
    });
  }, [head, base]);
  const scorerId =
    scorerParam === 'status' ? null : (numberParam(scorerParam) ?? sharedScorers[0]?.scorer_id ?? null);

  const sameRun = headId !== null && headId === baseId;
  const otherDatasets = !!head && !!base && head.dataset_id !== base.dataset_id;
  // Wait for the runs list: it tells the datasets apart and which scorer both runs share.
  const ready = !choices.isPending && headId !== null && baseId !== null && !sameRun && !otherDatasets;
  const diff = useRunDiff(projectId, { headId: headId ?? 0, baseId: baseId ?? 0, scorerId, outcome, page }, ready);
  const apiSaysOtherDataset = diff.isError && isApiError(diff.error) && diff.error.code === 'DIFFERENT_DATASETS';

  const headName = head ? runName(head) : headId ? `Run #${headId}` : 'the head run';
  const baseName = base ? runName(base) : baseId ? `Run #${baseId}` : 'the base run';

  const runOptions = (other: Run | undefined) => {
    if (!other) {
      return runs.map((r) => (
        <option key={r.id} value={r.id}>
          {optionLabel(r, datasetName(r.dataset_id))}
        </option>
      ));
    }
    const same = runs.filter((r) => r.dataset_id === other.dataset_id);
    const rest = runs.filter((r) => r.dataset_id !== other.dataset_id);
    return (
      <>
        <optgroup label={`Same dataset: ${datasetName(other.dataset_id)}`}>
          {same.map((r) => (
            <option key={r.id} value={r.id}>
              {optionLabel(r, datasetName(r.dataset_id))}
            </option>
          ))}
        </optgroup>
        {rest.length > 0 && (
          <optgroup label="Other datasets (not comparable)">
            {rest.map((r) => (
              <option key={r.id} value={r.id}>
                {optionLabel(r, datasetName(r.dataset_id))}
              </option>
            ))}
          </optgroup>
        )}
      </>
    );
  };

  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-600">
        <Link to="/projects" className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          Projects
        </Link>{' '}
        /{' '}
        <Link to={`/projects/${projectId}`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          {project.data?.name ?? 'Project'}
        </Link>{' '}
        / <span className="text-zinc-900">Compare runs</span>
      </nav>
      <header className="space-y-1">
        <h1 className="text-xl font-semibold">Compare runs</h1>
        <p className="text-sm text-zinc-600">
          What the head run fixed and broke against the base run, case by case. Only two runs of the same dataset compare.
        </p>
      </header>

      <Card>
        <CardContent>
          {choices.isPending ? (
            <LoadingRows label="Loading runs" />
          ) : choices.isError ? (
            <ErrorState title="Could not load the runs" error={choices.error} onRetry={() => choices.refetch()} retrying={choices.isFetching} />
          ) : runs.length < 2 ? (
            <EmptyState
              title="Two runs are needed to compare"
              description="Run the same dataset twice (for example after changing a prompt or a model), then compare the runs here."
              action={
                <Link to={`/projects/${projectId}`} className={cn('rounded-xl font-medium text-indigo-700 hover:text-indigo-800', focusRing)}>
                  Back to the runs
                </Link>
              }
            />
          ) : (
            <div className="flex flex-wrap items-end gap-4">
              <div className="max-w-full space-y-1">
                <Label htmlFor="compare-base">Base run (before)</Label>
                <Select
                  id="compare-base"
                  className="w-full max-w-sm"
                  value={baseId ?? ''}
                  onChange={(e) => update({ base: e.target.value, page: null })}
                >
                  <option value="">Choose a run…</option>
                  {runOptions(head)}
                </Select>
              </div>
              <Button
                variant="secondary"
                aria-label="Swap base and head runs"
                disabled={!headId || !baseId}
                onClick={() => update({ head: baseId, base: headId, page: null })}
              >
                <span aria-hidden="true">⇄</span> Swap
              </Button>
              <div className="max-w-full space-y-1">
                <Label htmlFor="compare-head">Head run (after)</Label>
                <Select
                  id="compare-head"
                  className="w-full max-w-sm"
                  value={headId ?? ''}
                  onChange={(e) => update({ head: e.target.value, page: null })}
                >
                  <option value="">Choose a run…</option>
                  {runOptions(base)}
                </Select>
              </div>
              <div className="space-y-1">
                <Label htmlFor="compare-scorer">Pass or fail from</Label>
                <Select
                  id="compare-scorer"
                  value={scorerId ?? 'status'}
                  onChange={(e) => update({ scorer: e.target.value, page: null })}
                >
                  <option value="status">Output status (succeeded or failed)</option>
                  {sharedScorers.map((s) => (
                    <option key={s.scorer_id} value={s.scorer_id}>
                      Scorer: {s.name}
                    </option>
                  ))}
                </Select>
              </div>
            </div>
          )}
        </CardContent>
      </Card>

      {sameRun ? (
        <Alert tone="info">Pick two different runs: a run compared with itself has nothing to show.</Alert>
      ) : otherDatasets || apiSaysOtherDataset ? (
        <div role="alert" data-testid="not-comparable" className="rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
          <p className="font-medium">These runs are not comparable.</p>
          <p>
            {head && base
              ? `${headName} ran on ${datasetName(head.dataset_id)} and ${baseName} on ${datasetName(base.dataset_id)}. `
              : 'The two runs are on different datasets. '}
            A comparison matches the same cases, so pick two runs of the same dataset.
          </p>
        </div>
      ) : !ready ? (
        runs.length >= 2 && <EmptyState title="Pick a base run and a head run" description="Choose two runs of the same dataset above." />
      ) : diff.isPending ? (
        <LoadingRows label="Comparing the runs" />
      ) : diff.isError ? (
        <ErrorState title="Could not compare the runs" error={diff.error} onRetry={() => diff.refetch()} retrying={diff.isFetching} />
      ) : (
        <div className="space-y-6" aria-busy={diff.isFetching}>
          <StoppedRunsNote runs={[{ role: 'base', name: baseName, run: base }, { role: 'head', name: headName, run: head }]} />
          <DiffCounters counts={diff.data.counts} verdictsFrom={diff.data.verdicts_from} scorerName={diff.data.scorer?.name ?? null} />
          <PairedVerdict comparison={diff.data.comparison} headName={headName} baseName={baseName} binary={diff.data.comparison.binary} />
          {diff.data.targets.length > 1 && <TargetsTable targets={diff.data.targets} />}
          <MissesList
            projectId={projectId}
            headId={diff.data.head_run_id}
            cases={diff.data.cases}
            outcome={outcome}
            onOutcome={(o) => update({ outcome: o, page: null })}
            onPage={(p) => update({ page: p === 1 ? null : p })}
          />
          {head && base && (
            <PairwiseSection
              key={`${head.id}-${base.id}`}
              projectId={projectId}
              run={head}
              baseRun={base}
              canEdit={roleAtLeast(project.data?.role, 'editor')}
            />
          )}
        </div>
      )}
    </div>
  );
}

function optionLabel(r: Run, dataset: string) {
  return `${runName(r)} (#${r.id}) · ${dataset} · ${r.status}`;
}
