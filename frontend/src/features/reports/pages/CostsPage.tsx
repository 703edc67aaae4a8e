import { Link } from 'react-router-dom';
import { Card, CardContent, EmptyState } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { absoluteTime } from '@/lib/format';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { CostReport, TokenUsage } from '../api';
import { Figure, type Column } from '../components/Figure';
import { SeriesBars } from '../components/charts';
import { Loading, LoadError, NoRunsYet, ReportsShell } from '../components/ReportsShell';
import { ScopeFilters, useScope } from '../components/ScopeFilters';
import { int, money } from '../format';
import { useCosts, useTokens } from '../hooks';

const dollars = (micros: number) => micros / 1_000_000;
const perOutput = (spent: number, outputs: number) => (outputs > 0 ? money(spent / outputs) : '—');
/** A model row without a model: recorded traces and judge-mode runs' questions. */
const spendModel = (name: string | null | undefined) => name ?? 'No model (traces, judge mode)';

export const KIND_LABELS: Record<CostReport['total']['by_kind'][number]['kind'], string> = {
  model_calls: 'Model calls',
  judges: 'Judges',
  judge_mode: 'Judge mode',
  pairwise_targets: 'Pairwise: two targets',
  pairwise_runs: 'Pairwise: two runs',
  generation: 'Generation',
  scorer_trials: 'Scorer trials',
  critique: 'Rubric critiques',
  assist: 'AI assist',
  refinement: 'Refinement',
  pairwise_judge: 'Experiment pairwise judges',
  arena_judge: 'Arena judges',
  connection_test: 'Connection tests',
};

function Stats({ items, label }: { items: [string, string][]; label: string }) {
  return (
    <dl aria-label={label} className="grid grid-cols-2 gap-4 sm:grid-cols-5">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt className="text-sm text-zinc-600">{k}</dt>
          <dd className="text-lg font-semibold tabular-nums text-zinc-900">{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function Totals({ total }: { total: CostReport['total'] }) {
  return (
    <Card>
      <CardContent className="space-y-4">
        <Stats
          label="Totals"
          items={[
            ['Spent', money(total.spent_micros)],
            ['Finished outputs', int(total.outputs)],
            ['Model cost per output', perOutput(total.calls_micros, total.outputs)],
            ['Tokens in', int(total.tokens_in)],
            ['Tokens out', int(total.tokens_out)],
          ]}
        />
        <Stats label="Spent by kind" items={total.by_kind.map((k) => [KIND_LABELS[k.kind], money(k.spent_micros)])} />
      </CardContent>
    </Card>
  );
}

type Spend = Omit<CostReport['total'], 'by_kind'>;
/** The spend columns every breakdown shares: the total and its three parts. */
function spendColumns<R extends Spend>(): Column<R>[] {
  return [
    { key: 'spent', header: 'Spent', cell: (r) => money(r.spent_micros), numeric: true },
    { key: 'calls', header: 'Model calls', cell: (r) => money(r.calls_micros), numeric: true },
    { key: 'judges', header: 'Judges', cell: (r) => money(r.judge_micros), numeric: true },
    { key: 'generation', header: 'Generation', cell: (r) => money(r.generation_micros), numeric: true },
  ];
}

/** Token usage per day as a wide table: one column per model (tokens in + out). */
function tokensByDay(usage: TokenUsage) {
  const models = new Map<string, string>();
  const days = new Map<string, Record<string, number | string>>();
  for (const it of usage.items) {
    const key = `m${it.model_id ?? 'traces'}`;
    models.set(key, spendModel(it.model_name));
    const row = days.get(it.day) ?? { day: it.day };
    row[key] = ((row[key] as number | undefined) ?? 0) + it.tokens_in + it.tokens_out;
    days.set(it.day, row);
  }
  return { series: [...models].map(([key, label]) => ({ key, label })), rows: [...days.values()] };
}

export function CostsPage() {
  const { project } = useProjectOutlet();
  const scope = useScope();
  const costs = useCosts(project.id, scope.scope, scope.valid);
  const tokens = useTokens(project.id, scope.scope, scope.valid);
  const filtered = scope.scope.dataset_id !== undefined || scope.scope.date_from !== undefined || scope.scope.date_to !== undefined;

  let body;
  if (!scope.valid) body = null;
  else if (costs.isPending || tokens.isPending) body = <Loading label="Loading the cost report" />;
  else if (costs.isError) body = <LoadError what="the cost report" error={costs.error} retry={() => costs.refetch()} retrying={costs.isFetching} />;
  else if (tokens.isError) body = <LoadError what="token usage" error={tokens.error} retry={() => tokens.refetch()} retrying={tokens.isFetching} />;
  else if (costs.data.total.outputs === 0 && costs.data.total.spent_micros === 0 && filtered)
    body = <EmptyState title="Nothing in this scope" description="No finished output matches the dataset and dates chosen. Widen the range or choose All datasets." />;
  else if (costs.data.total.outputs === 0 && costs.data.total.spent_micros === 0)
    body = (
      <NoRunsYet
        projectId={project.id}
        title="Nothing spent yet"
        description="Every spend is counted here: runs' model calls and judges, judge mode, generation jobs and scorer trials. Start a run; its spend by model, run and day shows here as outputs finish."
      />
    );
  else {
    const c = costs.data;
    const byDay = tokensByDay(tokens.data);
    body = (
      <div className="space-y-4">
        <Totals total={c.total} />
        <div className="grid gap-4 lg:grid-cols-2">
          <Figure
            title="Spend by model"
            description="Per model: its calls, the judges of its outputs and the generation jobs it ran."
            chart={(w, h) => (
              <SeriesBars width={w} height={h} series={[{ key: 'dollars', label: 'Spent ($)' }]} data={c.by_model.map((m) => ({ name: spendModel(m.model_name), dollars: dollars(m.spent_micros) }))} />
            )}
            table={{
              rowKey: (m) => m.model_id ?? 'none',
              rows: c.by_model,
              columns: [
                { key: 'model', header: 'Model', cell: (m) => spendModel(m.model_name) },
                ...spendColumns<CostReport['by_model'][number]>(),
                { key: 'outputs', header: 'Outputs', cell: (m) => int(m.outputs), numeric: true },
                { key: 'per', header: 'Model cost per output', cell: (m) => perOutput(m.calls_micros, m.outputs), numeric: true },
                { key: 'in', header: 'Tokens in', cell: (m) => int(m.tokens_in), numeric: true },
                { key: 'out', header: 'Tokens out', cell: (m) => int(m.tokens_out), numeric: true },
              ],
            }}
          />
          <Figure
            title="Tokens per model"
            description="Tokens sent (in) and received (out) per model."
            chart={(w, h) => (
              <SeriesBars
                width={w}
                height={h}
                series={[
                  { key: 'in', label: 'Tokens in' },
                  { key: 'out', label: 'Tokens out' },
                ]}
                data={c.by_model.map((m) => ({ name: spendModel(m.model_name), in: m.tokens_in, out: m.tokens_out }))}
              />
            )}
            table={{
              rowKey: (m) => m.model_id ?? 'none',
              rows: c.by_model,
              columns: [
                { key: 'model', header: 'Model', cell: (m) => spendModel(m.model_name) },
                { key: 'in', header: 'Tokens in', cell: (m) => int(m.tokens_in), numeric: true },
                { key: 'out', header: 'Tokens out', cell: (m) => int(m.tokens_out), numeric: true },
                { key: 'per', header: 'Tokens per output', cell: (m) => (m.outputs ? int((m.tokens_in + m.tokens_out) / m.outputs) : '—'), numeric: true },
              ],
            }}
          />
          <Figure
            title="Spend per day"
            description="Dollars spent per UTC day: by when each output finished (its judges too), and when each generation job ended."
            chart={(w, h) => <SeriesBars width={w} height={h} series={[{ key: 'dollars', label: 'Spent ($)' }]} data={c.by_day.map((d) => ({ name: d.day, dollars: dollars(d.spent_micros) }))} />}
            table={{
              rowKey: (d) => d.day,
              rows: c.by_day,
              columns: [
                { key: 'day', header: 'Day (UTC)', cell: (d) => d.day },
                ...spendColumns<CostReport['by_day'][number]>(),
                { key: 'outputs', header: 'Outputs', cell: (d) => int(d.outputs), numeric: true },
                { key: 'in', header: 'Tokens in', cell: (d) => int(d.tokens_in), numeric: true },
                { key: 'out', header: 'Tokens out', cell: (d) => int(d.tokens_out), numeric: true },
              ],
            }}
          />
          <Figure
            title="Token usage over time"
            description="Tokens (in + out) per UTC day, stacked by model."
            chart={(w, h) => <SeriesBars width={w} height={h} stacked xKey="day" series={byDay.series} data={byDay.rows} />}
            table={{
              rowKey: (t, i) => `${t.day}-${t.model_id ?? 'traces'}-${i}`,
              rows: tokens.data.items,
              columns: [
                { key: 'day', header: 'Day (UTC)', cell: (t) => t.day },
                { key: 'model', header: 'Model', cell: (t) => spendModel(t.model_name) },
                { key: 'in', header: 'Tokens in', cell: (t) => int(t.tokens_in), numeric: true },
                { key: 'out', header: 'Tokens out', cell: (t) => int(t.tokens_out), numeric: true },
                { key: 'outputs', header: 'Outputs', cell: (t) => int(t.outputs), numeric: true },
              ],
            }}
          />
        </div>
        <Figure
          title="Spend by run"
          description="Dollars spent per run, its model calls and judges, newest first."
          chart={(w, h) => (
            <SeriesBars width={w} height={h} series={[{ key: 'dollars', label: 'Spent ($)' }]} data={c.by_run.map((r) => ({ name: r.run_name, dollars: dollars(r.spent_micros) }))} />
          )}
          table={{
            rowKey: (r) => r.run_id,
            rows: c.by_run,
            columns: [
              {
                key: 'run',
                header: 'Run',
                cell: (r) => (
                  <Link to={`/projects/${project.id}/runs/${r.run_id}`} className={cn('rounded text-indigo-700 underline', focusRing)}>
                    {r.run_name}
                  </Link>
                ),
              },
              { key: 'status', header: 'Status', cell: (r) => (r.judge_mode ? `${r.status} (judge mode)` : r.status) },
              { key: 'created', header: 'Started', cell: (r) => absoluteTime(r.created_at) },
              { key: 'spent', header: 'Spent', cell: (r) => money(r.spent_micros), numeric: true },
              { key: 'judges', header: 'Judges', cell: (r) => money(r.judge_micros), numeric: true },
              { key: 'outputs', header: 'Outputs', cell: (r) => int(r.outputs), numeric: true },
              { key: 'tokens', header: 'Tokens (in / out)', cell: (r) => `${int(r.tokens_in)} / ${int(r.tokens_out)}`, numeric: true },
            ],
          }}
        />
      </div>
    );
  }
  return (
    <ReportsShell projectId={project.id} title="Costs and tokens" intro="Everything the project spent (model calls, judges, judge mode, generation jobs, scorer trials, experiments' AI assist, refinement and pairwise judges, EvalArena's judge runs) and the tokens used: in total, by kind, by model, by run and by day.">
      <ScopeFilters projectId={project.id} state={scope} />
      {body}
    </ReportsShell>
  );
}
