import { useId } from 'react';
import { EmptyState, Select } from '@/components/ui';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { RagSummary } from '../api';
import { Figure, type Column } from '../components/Figure';
import { IntervalBars } from '../components/charts';
import { Loading, LoadError, ReportsShell } from '../components/ReportsShell';
import { ScopeFilters, useScope } from '../components/ScopeFilters';
import { errorBar, int, interval, modelName, ms, num, pct } from '../format';
import { useRag, useScorers } from '../hooks';
import { useIdParam } from '../components/useIdParam';

type Row = RagSummary['items'][number];
const withCi = (m: { mean: number | null; low: number | null; high: number | null }) => (m.mean === null ? '—' : `${num(m.mean)} ${interval(m.low, m.high)}`);
const title = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

function RagPicker({ projectId, value, onChange }: { projectId: number; value: number | null; onChange: (id: number | null) => void }) {
  const id = useId();
  const options = (useScorers(projectId).data?.items ?? []).filter((s) => s.kind === 'rag_metrics');
  if (options.length < 2) return null;
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="text-sm text-zinc-700">
        RAG scorer
      </label>
      <Select id={id} controlSize="sm" value={value === null ? '' : String(value)} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}>
        <option value="">The first with scores</option>
        {options.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </Select>
    </div>
  );
}

function Summary({ r }: { r: RagSummary }) {
  const columns: Column<Row>[] = [
    { key: 'model', header: 'Model', cell: (m) => modelName(m.model_name) },
    ...r.metrics.map((name, i) => ({ key: name, header: `${title(name)} (95% interval)`, cell: (m: Row) => withCi(m.metrics[i]!), numeric: true })),
    { key: 'avg', header: 'Average', cell: (m) => withCi(m.average), numeric: true },
    { key: 'success', header: 'Judged successfully', cell: (m) => `${pct(m.success_rate.rate)} ${interval(m.success_rate.low, m.success_rate.high, (v) => pct(v))} · ${m.success_rate.k} of ${m.success_rate.n}`, numeric: true },
    { key: 'p50', header: 'Latency p50', cell: (m) => ms(m.latency_p50_ms), numeric: true },
    { key: 'p95', header: 'Latency p95', cell: (m) => ms(m.latency_p95_ms), numeric: true },
    { key: 'outputs', header: 'Answers', cell: (m) => int(m.outputs), numeric: true },
  ];
  return (
    <Figure
      title="RAG metrics by model"
      description={`${r.scorer!.name} (${r.scorer!.versions.length === 1 ? 'version' : 'versions'} ${r.scorer!.versions.join(', ')}): the judges' average of groundedness, relevance, coherence and fluency (1–5) per model; whiskers are the 95% bootstrap interval clustered by case. The table has every metric.`}
      chart={(w, h) => (
        <IntervalBars width={w} height={h} valueLabel="Average (1–5)" domain={[0, 5]} data={r.items.map((m) => ({ name: modelName(m.model_name), value: m.average.mean, err: errorBar(m.average.mean, m.average.low, m.average.high) }))} />
      )}
      table={{ rowKey: (m) => m.model_id ?? 'traces', rows: r.items, columns }}
    />
  );
}

export function RagPage() {
  const { project } = useProjectOutlet();
  const scope = useScope();
  const [scorerId, choose] = useIdParam('rag');
  const rag = useRag(project.id, scorerId, scope.scope, scope.valid);

  let body;
  if (!scope.valid) body = null;
  else if (rag.isPending) body = <Loading label="Loading the RAG summary" />;
  else if (rag.isError) body = <LoadError what="the RAG summary" error={rag.error} retry={() => rag.refetch()} retrying={rag.isFetching} />;
  else if (rag.data.scorer === null)
    body = <EmptyState title="No RAG metrics scorer" description="Create a RAG metrics scorer (Scorers tab) and add it to a run over a conversations dataset; each model's groundedness, relevance, coherence and fluency show here." />;
  else if (rag.data.items.length === 0)
    body = <EmptyState title="No RAG scores in this scope" description={`${rag.data.scorer.name} has not judged any answer in the runs chosen. Add it to a run, or widen the dataset and dates.`} />;
  else body = <Summary r={rag.data} />;
  return (
    <ReportsShell
      projectId={project.id}
      title="RAG metrics"
      intro="Per model: each RAG metric's mean with its interval, how often the judges produced metrics, and the answers' latency."
      controls={<RagPicker projectId={project.id} value={scorerId} onChange={choose} />}
    >
      <ScopeFilters projectId={project.id} state={scope} />
      {body}
    </ReportsShell>
  );
}
