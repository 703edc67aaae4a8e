import { EmptyState } from '@/components/ui';
import { absoluteTime } from '@/lib/format';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { Interval, ScoreTrend } from '../api';
import { Figure, type Column } from '../components/Figure';
import { IntervalLines } from '../components/charts';
import { Loading, LoadError, NoRunsYet, ReportsShell } from '../components/ReportsShell';
import { ScorerPicker, useScorerChoice } from '../components/ScorerPicker';
import { ScopeFilters, useScope } from '../components/ScopeFilters';
import { errorBar, interval, modelName, num } from '../format';
import { useTrend } from '../hooks';

type TrendRun = ScoreTrend['runs'][number];
const mkey = (id: number | null) => `m${id ?? 'traces'}`;
const withCi = (s: Interval | undefined) => (s && s.mean !== null ? `${num(s.mean)} ${interval(s.low, s.high)}` : '—');

export function TrendPage() {
  const { project } = useProjectOutlet();
  const choice = useScorerChoice(project.id);
  const scope = useScope();
  const trend = useTrend(project.id, choice.scorerId, scope.scope, choice.ready && choice.scorerId !== null && scope.valid);

  let body;
  if (!scope.valid) body = null;
  else if (!choice.ready || (choice.scorerId !== null && trend.isPending)) body = <Loading label="Loading the score trend" />;
  else if (choice.scorerId === null)
    body = (
      <EmptyState
        title="No scorer to follow"
        description="The trend follows one scorer's scores across runs. Create a scorer (an exact-match check or an LLM judge), add it to a run, and the run's scores show here."
      />
    );
  else if (trend.isError) body = <LoadError what="the score trend" error={trend.error} retry={() => trend.refetch()} retrying={trend.isFetching} />;
  else if (!trend.data || trend.data.runs.length === 0)
    body = (
      <NoRunsYet
        projectId={project.id}
        title="No scored runs yet"
        description="No run has a score from this scorer yet. Start a run with the scorer and each finished run adds a point here."
      />
    );
  else {
    const t = trend.data;
    const series = [{ key: 'all', label: 'All models' }, ...t.models.map((m) => ({ key: mkey(m.model_id), label: modelName(m.model_name) }))];
    const data = t.runs.map((r) => {
      const row: Record<string, unknown> = { name: `#${r.run_id} ${r.name}`, all: r.score.mean, all_err: errorBar(r.score.mean, r.score.low, r.score.high) };
      for (const m of r.models) {
        row[mkey(m.model_id)] = m.score.mean;
        row[`${mkey(m.model_id)}_err`] = errorBar(m.score.mean, m.score.low, m.score.high);
      }
      return row;
    });
    const columns: Column<TrendRun>[] = [
      { key: 'run', header: 'Run', cell: (r) => `#${r.run_id} ${r.name}` },
      { key: 'started', header: 'Started', cell: (r) => absoluteTime(r.created_at) },
      { key: 'all', header: 'All models (95% interval)', cell: (r) => withCi(r.score), numeric: true },
      ...t.models.map((m) => ({
        key: mkey(m.model_id),
        header: modelName(m.model_name),
        cell: (r: TrendRun) => withCi(r.models.find((x) => x.model_id === m.model_id)?.score),
        numeric: true,
      })),
    ];
    body = (
      <Figure
        title={`Mean score per run: ${t.scorer?.name ?? ''}`}
        description="Mean of case means for each of the latest scored runs (oldest on the left), overall and per model; whiskers are 95% bootstrap intervals clustered by case."
        height={320}
        chart={(w, h) => <IntervalLines width={w} height={h} series={series} data={data} />}
        table={{ rowKey: (r) => r.run_id, rows: t.runs, columns }}
      />
    );
  }
  return (
    <ReportsShell
      projectId={project.id}
      title="Score trend"
      intro="How one scorer's mean score moved across the project's runs."
      controls={<ScorerPicker choice={choice} allowNone={false} />}
    >
      <ScopeFilters projectId={project.id} state={scope} />
      {body}
    </ReportsShell>
  );
}
