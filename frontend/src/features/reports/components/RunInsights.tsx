import type { ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { Alert, Card, CardContent, EmptyState, Label, Select } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { request } from '@/features/datasets/api';
import { cn, focusRing } from '@/lib/cn';
import { RATE_HELP, skippedWhy, successBasis } from '@/lib/rates';
import type { RunDashboard, RunView, TargetStatistics } from '../api';
import { int, interval, money, ms, num, pct, percentChange, signed } from '../format';
import { useDashboard, useReportRun, useStatistics, useTargetPairs } from '../hooks';
import { DataTable } from './Figure';
import { Loading, LoadError } from './ReportsShell';

function Stat({ label, value, note, title }: { label: string; value: string; note?: ReactNode; title?: string }) {
  return (
    <div>
      <dt className="text-sm text-zinc-600" title={title}>
        {label}
      </dt>
      <dd className="text-lg font-semibold tabular-nums text-zinc-900">{value}</dd>
      {note && <dd className="text-xs text-zinc-600">{note}</dd>}
    </div>
  );
}

function Delta({ projectId, d }: { projectId: number; d: NonNullable<RunDashboard['delta_vs_previous']> }) {
  return (
    <>
      {d.percentage !== null && <span data-testid="delta-percent">{percentChange(d.percentage)}</span>}{d.percentage !== null && ' · '}against{' '}
      <Link to={`/projects/${projectId}/reports/runs?run=${d.previous_run_id}`} className={cn('rounded text-indigo-700 underline', focusRing)}>
        run #{d.previous_run_id}
      </Link>{' '}
      ({num(d.previous, 3)})
    </>
  );
}

/** Pins the run's headline scorer (PUT /runs/{id}/headline); every reader of the run follows. */
function HeadlinePicker({ projectId, run, current }: { projectId: number; run: RunView; current: number | null }) {
  const queryClient = useQueryClient();
  const pin = useMutation({
    mutationFn: (scorerId: number | null) =>
      request<RunView>('PUT', `/api/projects/${projectId}/runs/${run.id}/headline`, {
        body: { scorer_id: scorerId },
        headers: { 'If-Match': `"${run.row_version}"` },
      }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['project', projectId] }),
  });
  const scorers = [...new Map((run.scorers ?? []).filter((s) => s.kind !== 'pairwise_judge').map((s) => [s.scorer_id, s])).values()];
  if (scorers.length < 2) return null;
  return (
    <div className="mb-4 flex flex-wrap items-center gap-2 text-sm">
      <Label htmlFor={`headline-${run.id}`}>Headline scorer</Label>
      <Select
        id={`headline-${run.id}`}
        controlSize="sm"
        value={run.headline_scorer_id === null || run.headline_scorer_id === undefined ? '' : String(run.headline_scorer_id)}
        onChange={(e) => pin.mutate(e.target.value === '' ? null : Number(e.target.value))}
        disabled={pin.isPending}
      >
        <option value="">Default ({scorers.find((s) => s.scorer_id === current)?.name ?? 'composite'})</option>
        {scorers.map((s) => (
          <option key={s.scorer_id} value={s.scorer_id}>
            {s.name}
          </option>
        ))}
      </Select>
      <span className="text-zinc-600">kept on the run; its page and report lead with it</span>
      {pin.isError && <Alert>{errorMessage(pin.error)}</Alert>}
    </div>
  );
}

/** The run's headline (GET /reports/runs/{id}/dashboard) and what it spent (the run's own counters). */
export function RunHeadline({ projectId, runId, scorerId, canPin = false }: { projectId: number; runId: number; scorerId: number | null; canPin?: boolean }) {
  const board = useDashboard(projectId, runId, scorerId);
  const run = useReportRun(projectId, runId);
  if (board.isPending || run.isPending) return <Loading label="Loading the run's headline" />;
  if (board.isError) return <LoadError what="the run's headline" error={board.error} retry={() => board.refetch()} retrying={board.isFetching} />;
  if (run.isError) return <LoadError what="the run" error={run.error} retry={() => run.refetch()} retrying={run.isFetching} />;
  const d = board.data;
  const score = d.score;
  const named = d.scorer ? ` · ${d.scorer.name}` : '';
  return (
    <Card>
      <CardContent>
        {canPin && scorerId === null && <HeadlinePicker projectId={projectId} run={run.data} current={d.scorer?.id ?? null} />}
        <dl aria-label="Run headline" className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-6">
          <Stat
            label={d.scorer ? `Headline score${named}` : 'Headline score'}
            value={score?.mean != null ? num(score.mean, 3) : '—'}
            note={score?.mean != null ? `95% interval ${interval(score.low, score.high, (v) => num(v, 3))} · ${int(score.n_cases)} cases` : d.scorer ? 'No scores yet' : 'The run has no scorer'}
          />
          <Stat
            label="Change vs previous run"
            value={d.delta_vs_previous ? signed(d.delta_vs_previous.absolute) : '—'}
            note={d.delta_vs_previous ? <Delta projectId={projectId} d={d.delta_vs_previous} /> : 'No earlier scored run on this dataset'}
          />
          <Stat
            label={`Pass rate${named}`}
            title={RATE_HELP.pass}
            value={d.pass_rate && d.pass_rate.n ? pct(d.pass_rate.rate) : '—'}
            note={d.pass_rate && d.pass_rate.n ? `${interval(d.pass_rate.low, d.pass_rate.high, (v) => pct(v))} · ${d.pass_rate.k} of ${d.pass_rate.n} verdicts passed` : 'No pass/fail verdicts'}
          />
          <Stat
            label="Success rate"
            title={RATE_HELP.success}
            value={pct(d.success_rate.rate)}
            note={`${interval(d.success_rate.low, d.success_rate.high, (v) => pct(v))} · ${successBasis(d.counts, skippedWhy(d.status))}`}
          />
          <Stat label="Pairwise win rate" value={d.pairwise_win_rate === null ? '—' : pct(d.pairwise_win_rate)} note={d.pairwise_win_rate === null ? 'No pairwise judging in this run' : 'The best target’s; a tie counts half'} />
          <Stat label="Spent" value={money(run.data.spent_micros)} note={`judges ${money(run.data.judge_spent_micros)} · ${int(d.tokens)} tokens · p50 ${ms(d.latency_p50_ms)}, p95 ${ms(d.latency_p95_ms)}`} />
        </dl>
      </CardContent>
    </Card>
  );
}

const VERDICT: Record<string, (a: string, b: string) => string> = {
  'B better': (a, b) => `${b} is better than ${a}`,
  'A better': (a, b) => `${a} is better than ${b}`,
  'not distinguishable': (a, b) => `${a} and ${b} are not distinguishable`,
};

/** A paired comparison of every two targets of the run on the cases both scored. */
export function TargetVerdicts({ projectId, runId, targets, versionId }: { projectId: number; runId: number; targets: { id: number; label: string }[]; versionId: number | null }) {
  const pairs = useTargetPairs(projectId, runId, targets.map((t) => t.id), versionId);
  if (versionId === null) return <EmptyState title="No scorer" description="Targets are compared on a scorer's scores; this run has none." />;
  if (targets.length < 2) return <EmptyState title="One target" description="This run has a single target: compare it with another run of the same dataset instead." />;
  if (pairs.some((p) => p.isPending)) return <Loading label="Comparing the targets" />;
  const failed = pairs.find((p) => p.isError);
  if (failed) return <LoadError what="the target comparisons" error={failed.error} retry={() => failed.refetch()} retrying={failed.isFetching} />;
  const rows = pairs.map((p) => p.data!);
  return (
    <div className="space-y-2">
      <ul className="list-disc space-y-1 pl-5 text-sm text-zinc-800">
        {rows.map((r) => (
          <li key={`${r.target_a.target_id}-${r.target_b.target_id}`}>
            {r.comparison.n === 0 ? `${r.target_a.label} and ${r.target_b.label}: no case both scored` : VERDICT[r.comparison.verdict]!(r.target_a.label, r.target_b.label)}
          </li>
        ))}
      </ul>
      <DataTable
        caption="Paired comparisons between targets"
        rowKey={(r) => `${r.target_a.target_id}-${r.target_b.target_id}`}
        rows={rows}
        columns={[
          { key: 'pair', header: 'A vs B', cell: (r) => `${r.target_a.label} vs ${r.target_b.label}` },
          { key: 'n', header: 'Cases', cell: (r) => int(r.comparison.n), numeric: true },
          { key: 'diff', header: 'Mean B − A', cell: (r) => (r.comparison.mean_difference === null ? '—' : signed(r.comparison.mean_difference)), numeric: true },
          { key: 'ci', header: '95% interval', cell: (r) => interval(r.comparison.low, r.comparison.high, (v) => num(v, 3)), numeric: true },
          { key: 'p', header: 'p-value', cell: (r) => num(r.comparison.p_value, 3), numeric: true },
          { key: 'verdict', header: 'Verdict', cell: (r) => r.comparison.verdict },
        ]}
      />
    </div>
  );
}

/** Cases whose repeats disagree, per target (from the run's statistics). */
export function FlakyCases({ items }: { items: TargetStatistics[] }) {
  const repeated = items.filter((t) => t.flakiness !== null);
  if (repeated.length === 0) return <EmptyState title="No repeats" description="Flakiness needs a case run more than once: start a run with repeats of 2 or more." />;
  const rows = repeated.flatMap((t) => t.flakiness!.cases.map((c) => ({ target: t.label, targetId: t.target_id, binary: t.flakiness!.binary, ...c })));
  return (
    <div className="space-y-2">
      <ul className="space-y-1 text-sm text-zinc-800">
        {repeated.map((t) => {
          const f = t.flakiness!;
          return (
            <li key={t.target_id}>
              {t.label}: {f.n_flaky} of {f.n_cases} repeated cases flaky ({pct(f.flaky_share.estimate)}, 95% interval {interval(f.flaky_share.low, f.flaky_share.high, (v) => pct(v))})
            </li>
          );
        })}
      </ul>
      {rows.length === 0 ? (
        <p className="text-sm text-zinc-600">Every repeated case got the same result each time.</p>
      ) : (
        <DataTable
          caption="Flaky cases"
          rowKey={(r) => `${r.targetId}-${r.case_id}`}
          rows={rows}
          columns={[
            { key: 'case', header: 'Case', cell: (r) => `#${r.case_number ?? r.case_id}` },
            { key: 'target', header: 'Target', cell: (r) => r.target },
            { key: 'repeats', header: 'Repeats', cell: (r) => int(r.repeats), numeric: true },
            { key: 'mean', header: 'Mean', cell: (r) => num(r.mean, 3), numeric: true },
            { key: 'spread', header: 'Spread (max − min)', cell: (r) => num(r.spread, 3), numeric: true },
            { key: 'passes', header: 'Passed', cell: (r) => (r.passes === null ? '—' : `${r.passes} of ${r.repeats}`), numeric: true },
          ]}
        />
      )}
    </div>
  );
}

/** The run-level panels in one: mountable on the run page as `<RunInsights projectId={..} runId={..} />`. */
export function RunInsights({ projectId, runId, versionId }: { projectId: number; runId: number; versionId?: number | null }) {
  const stats = useStatistics(projectId, runId);
  if (stats.isPending) return <Loading label="Loading the run's statistics" />;
  if (stats.isError) return <LoadError what="the run's statistics" error={stats.error} retry={() => stats.refetch()} retrying={stats.isFetching} />;
  const scorers = stats.data.scorers;
  const version = scorers.find((s) => s.scorer_version_id === versionId) ?? scorers[0] ?? null;
  const items = stats.data.items.filter((i) => i.scorer_version_id === version?.scorer_version_id);
  const targets = [...new Map(stats.data.items.map((i) => [i.target_id, { id: i.target_id, label: i.label }])).values()];
  return (
    <div className="space-y-6">
      <RunHeadline projectId={projectId} runId={runId} scorerId={version?.scorer_id ?? null} />
      <section aria-label="Targets compared" className="space-y-2">
        <h3 className="text-base font-semibold text-zinc-900">Targets compared{version ? ` (${version.name} v${version.version})` : ''}</h3>
        <TargetVerdicts projectId={projectId} runId={runId} targets={targets} versionId={version?.scorer_version_id ?? null} />
      </section>
      <section aria-label="Flaky cases" className="space-y-2">
        <h3 className="text-base font-semibold text-zinc-900">Flaky cases</h3>
        <FlakyCases items={items} />
      </section>
    </div>
  );
}
