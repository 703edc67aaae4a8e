import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Card, CardContent, EmptyState, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { LeaderboardRow, QuestionQuality, Versions } from '../api';
import { Figure } from '../components/Figure';
import { IntervalBars } from '../components/charts';
import { Loading, LoadError, NoRunsYet, ReportsShell } from '../components/ReportsShell';
import { ScorerPicker, useScorerChoice } from '../components/ScorerPicker';
import { ScopeFilters, useScope } from '../components/ScopeFilters';
import { errorBar, int, interval, modelName, money, ms, num, pct } from '../format';
import { useLeaderboard, useQuestionQuality } from '../hooks';

type SortKey = 'model' | 'score' | 'pass' | 'success' | 'cost' | 'p50' | 'p95' | 'tokens' | 'outputs' | 'runs';

const SORTS: Record<SortKey, { label: string; value: (r: LeaderboardRow) => number | string | null; numeric: boolean }> = {
  model: { label: 'Model', value: (r) => modelName(r.model_name).toLowerCase(), numeric: false },
  score: { label: 'Mean score', value: (r) => r.score?.mean ?? null, numeric: true },
  pass: { label: 'Pass rate', value: (r) => r.pass_rate?.rate ?? null, numeric: true },
  success: { label: 'Success rate', value: (r) => r.success_rate.rate, numeric: true },
  cost: { label: 'Cost per output', value: (r) => r.cost_per_output_micros, numeric: true },
  p50: { label: 'Latency p50', value: (r) => r.latency_p50_ms, numeric: true },
  p95: { label: 'Latency p95', value: (r) => r.latency_p95_ms, numeric: true },
  tokens: { label: 'Tokens in / out', value: (r) => (r.tokens_in_per_output ?? 0) + (r.tokens_out_per_output ?? 0), numeric: true },
  outputs: { label: 'Outputs', value: (r) => r.outputs, numeric: true },
  runs: { label: 'Runs', value: (r) => r.runs, numeric: true },
};

/** Rows in the chosen order; rows without a value go last whichever the direction. */
export function sortRows(rows: LeaderboardRow[], key: SortKey | null, dir: 'asc' | 'desc'): LeaderboardRow[] {
  if (!key) return rows;
  const get = SORTS[key].value;
  return [...rows].sort((a, b) => {
    const x = get(a);
    const y = get(b);
    if (x === null && y === null) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    const c = typeof x === 'string' ? x.localeCompare(String(y)) : x - (y as number);
    return dir === 'asc' ? c : -c;
  });
}

function LeaderboardTable({ rows }: { rows: LeaderboardRow[] }) {
  // null: the API's own order (best first by mean score, then pass rate, then success)
  const [sort, setSort] = useState<{ key: SortKey | null; dir: 'asc' | 'desc' }>({ key: null, dir: 'desc' });
  const sorted = useMemo(() => sortRows(rows, sort.key, sort.dir), [rows, sort]);
  const toggle = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: SORTS[key].numeric && key !== 'cost' && key !== 'p50' && key !== 'p95' ? 'desc' : 'asc' }));
  const header = (key: SortKey) => {
    const active = sort.key === key;
    return (
      <TH key={key} aria-sort={active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'} className={SORTS[key].numeric ? 'text-right' : undefined}>
        <button type="button" onClick={() => toggle(key)} className={cn('inline-flex items-center gap-1 rounded-md text-left font-medium hover:text-zinc-900', focusRing)}>
          {SORTS[key].label}
          <span aria-hidden="true">{active ? (sort.dir === 'asc' ? '▲' : '▼') : '↕'}</span>
        </button>
      </TH>
    );
  };
  return (
    <Table aria-label="Leaderboard">
      <caption className="sr-only">Leaderboard: one row per model; column headers sort the table.</caption>
      <THead>
        <TR>
          {(['model', 'score', 'pass', 'success', 'cost', 'p50', 'p95', 'tokens', 'outputs', 'runs'] as SortKey[]).map(header)}
        </TR>
      </THead>
      <TBody>
        {sorted.map((r) => (
          <TR key={r.model_id ?? 'traces'}>
            <th scope="row" className="whitespace-nowrap px-3 py-2 text-left font-medium text-zinc-900">
              {modelName(r.model_name)}
            </th>
            <TD className="text-right tabular-nums">
              {r.score ? (
                <>
                  {num(r.score.mean)} <span className="block whitespace-nowrap text-xs text-zinc-600">{interval(r.score.low, r.score.high)}</span>
                </>
              ) : (
                '—'
              )}
            </TD>
            <TD className="text-right tabular-nums">
              {r.pass_rate && r.pass_rate.n > 0 ? (
                <>
                  {pct(r.pass_rate.rate)} <span className="block whitespace-nowrap text-xs text-zinc-600">{interval(r.pass_rate.low, r.pass_rate.high, (v) => pct(v))}</span>
                </>
              ) : (
                '—'
              )}
            </TD>
            <TD className="text-right tabular-nums">
              {pct(r.success_rate.rate)} <span className="block whitespace-nowrap text-xs text-zinc-600">{r.succeeded} of {r.outputs} sent</span>
            </TD>
            <TD className="text-right tabular-nums">{money(r.cost_per_output_micros)}</TD>
            <TD className="text-right tabular-nums">{ms(r.latency_p50_ms)}</TD>
            <TD className="text-right tabular-nums">{ms(r.latency_p95_ms)}</TD>
            <TD className="text-right tabular-nums">
              {num(r.tokens_in_per_output, 0)} / {num(r.tokens_out_per_output, 0)}
            </TD>
            <TD className="text-right tabular-nums">{int(r.outputs)}</TD>
            <TD className="text-right tabular-nums">{int(r.runs)}</TD>
          </TR>
        ))}
      </TBody>
    </Table>
  );
}

function QuestionQualitySection({ data }: { data: QuestionQuality }) {
  if (data.items.length === 0) {
    return (
      <EmptyState
        title="No question quality yet"
        description="Rate a dataset's questions with judges (a dataset's page → Judge questions) to see which generator model writes the best questions."
      />
    );
  }
  return (
    <Figure
      title="Question quality by generator model"
      description="Mean overall rating (1–10) judges gave the questions each model generated, with its 95% interval, across the project's judge-mode runs."
      chart={(w, h) => (
        <IntervalBars
          width={w}
          height={h}
          valueLabel="Mean rating"
          domain={[0, 10]}
          data={data.items.map((r) => ({ name: r.name, value: r.mean, err: errorBar(r.mean, r.low, r.high) }))}
        />
      )}
      table={{
        rowKey: (r) => r.model_id ?? 'written',
        rows: data.items,
        columns: [
          { key: 'name', header: 'Generator', cell: (r) => r.name },
          { key: 'mean', header: 'Mean rating', cell: (r) => num(r.mean), numeric: true },
          { key: 'ci', header: '95% interval', cell: (r) => interval(r.low, r.high), numeric: true },
          { key: 'q', header: 'Questions', cell: (r) => int(r.questions), numeric: true },
          { key: 'ratings', header: 'Ratings', cell: (r) => int(r.ratings), numeric: true },
          { key: 'datasets', header: 'Datasets', cell: (r) => int(r.datasets), numeric: true },
        ],
      }}
    />
  );
}

export function LeaderboardPage() {
  const { project } = useProjectOutlet();
  const choice = useScorerChoice(project.id);
  const [params, setParams] = useSearchParams();
  const versions: Versions = params.get('versions') === 'latest' ? 'latest' : 'all';
  const scope = useScope();
  const board = useLeaderboard(project.id, choice.scorerId, versions, scope.scope, choice.ready && scope.valid);
  const quality = useQuestionQuality(project.id);
  const rows = board.data?.items ?? [];
  const scored = rows.filter((r) => r.score && r.score.mean !== null);
  const judged = rows.filter((r) => r.pass_rate && r.pass_rate.n > 0);

  const controls = (
    <>
      <ScorerPicker choice={choice} />
      <label className="flex items-center gap-2 text-sm text-zinc-700">
        Versions
        <Select
          controlSize="sm"
          value={versions}
          onChange={(e) =>
            setParams((p) => {
              const next = new URLSearchParams(p);
              next.set('versions', e.target.value);
              return next;
            })
          }
        >
          <option value="all">All versions pooled</option>
          <option value="latest">Latest version only</option>
        </Select>
      </label>
    </>
  );

  const filtered = scope.scope.dataset_id !== undefined || scope.scope.date_from !== undefined || scope.scope.date_to !== undefined;
  let body;
  if (!scope.valid) body = null;
  else if (board.isPending || !choice.ready) body = <Loading label="Loading the leaderboard" />;
  else if (board.isError) body = <LoadError what="the leaderboard" error={board.error} retry={() => board.refetch()} retrying={board.isFetching} />;
  else if (rows.length === 0 && filtered)
    body = <EmptyState title="Nothing in this scope" description="No finished output matches the dataset and dates chosen. Widen the range or choose All datasets." />;
  else if (rows.length === 0)
    body = (
      <NoRunsYet
        projectId={project.id}
        title="No results to rank yet"
        description="The leaderboard compares models over the outputs of your runs. Start a run against two or more models, with a scorer, and come back when it has finished."
      />
    );
  else
    body = (
      <div className="space-y-4">
        {board.data.scorer === null && choice.unscored ? (
          <EmptyState
            title="No scores yet"
            description={
              choice.options.length === 0
                ? 'The project has no scorer yet, so models are ranked by success rate below. Add a scorer (Scorers tab) to a run to compare mean scores and pass rates.'
                : 'None of the project’s scorers has scored an output yet, so models are ranked by success rate below. Add a scorer to a run, or score outputs by hand, and its scores show here.'
            }
          />
        ) : board.data.scorer === null ? (
          <Card>
            <CardContent className="text-sm text-zinc-700">
              No scorer chosen: models are ranked by success rate. Choose a scorer above to see mean scores and pass rates with their intervals.
            </CardContent>
          </Card>
        ) : scored.length === 0 ? (
          <EmptyState
            title="No scores yet"
            description={`No output in scope has a score from ${board.data.scorer.name}. Add the scorer to a run (or score outputs by hand) and the scores will show here.`}
          />
        ) : (
          <div className="grid gap-4 lg:grid-cols-2">
            <Figure
              title="Mean score by model"
              description={`Mean of case means from ${board.data.scorer.name} (versions ${board.data.scorer.versions.join(', ')}); whiskers are the 95% bootstrap interval clustered by case.`}
              chart={(w, h) => (
                <IntervalBars
                  width={w}
                  height={h}
                  valueLabel="Mean score"
                  data={scored.map((r) => ({ name: modelName(r.model_name), value: r.score!.mean, err: errorBar(r.score!.mean, r.score!.low, r.score!.high) }))}
                />
              )}
              table={{
                rowKey: (r) => r.model_id ?? 'traces',
                rows: scored,
                columns: [
                  { key: 'model', header: 'Model', cell: (r) => modelName(r.model_name) },
                  { key: 'mean', header: 'Mean score', cell: (r) => num(r.score!.mean), numeric: true },
                  { key: 'ci', header: '95% interval', cell: (r) => interval(r.score!.low, r.score!.high), numeric: true },
                  { key: 'cases', header: 'Cases', cell: (r) => int(r.score!.n_cases), numeric: true },
                  { key: 'n', header: 'Scores', cell: (r) => int(r.score!.n_values), numeric: true },
                ],
              }}
            />
            {judged.length > 0 && (
              <Figure
                title="Pass rate by model"
                description="Share of passing verdicts; whiskers are the 95% Wilson interval."
                chart={(w, h) => (
                  <IntervalBars
                    width={w}
                    height={h}
                    unit="%"
                    domain={[0, 100]}
                    valueLabel="Pass rate (%)"
                    data={judged.map((r) => {
                      const p = r.pass_rate!;
                      const v = p.rate === null ? null : p.rate * 100;
                      return { name: modelName(r.model_name), value: v, err: errorBar(v, p.low === null ? null : p.low * 100, p.high === null ? null : p.high * 100) };
                    })}
                  />
                )}
                table={{
                  rowKey: (r) => r.model_id ?? 'traces',
                  rows: judged,
                  columns: [
                    { key: 'model', header: 'Model', cell: (r) => modelName(r.model_name) },
                    { key: 'rate', header: 'Pass rate', cell: (r) => pct(r.pass_rate!.rate), numeric: true },
                    { key: 'ci', header: '95% interval', cell: (r) => interval(r.pass_rate!.low, r.pass_rate!.high, (v) => pct(v)), numeric: true },
                    { key: 'k', header: 'Passed', cell: (r) => `${r.pass_rate!.k} of ${r.pass_rate!.n}`, numeric: true },
                  ],
                }}
              />
            )}
          </div>
        )}
        <LeaderboardTable rows={rows} />
      </div>
    );

  return (
    <ReportsShell
      projectId={project.id}
      title="Leaderboard"
      intro="Every model across the project's runs: score, pass rate, cost, latency and tokens, each rate and mean with its 95% interval."
      controls={controls}
    >
      <ScopeFilters projectId={project.id} state={scope} />
      {body}
      <section aria-labelledby="quality-heading" className="space-y-3 pt-4">
        <h2 id="quality-heading" className="text-lg font-semibold text-zinc-900">
          Question quality (judge mode)
        </h2>
        {quality.isPending ? (
          <Loading label="Loading question quality" />
        ) : quality.isError ? (
          <LoadError what="question quality" error={quality.error} retry={() => quality.refetch()} retrying={quality.isFetching} />
        ) : (
          <QuestionQualitySection data={quality.data} />
        )}
      </section>
    </ReportsShell>
  );
}
