import { useId, useState } from 'react';
import { Card, CardContent, EmptyState, Select } from '@/components/ui';
import type { ComparisonSummary, FacetKind, RunFacets, TargetStatistics } from '../api';
import { heat, winMatrix } from '../analysis';
import { errorBar, int, interval, num, pct } from '../format';
import { DataTable, Figure } from './Figure';
import { IntervalBars, SeriesBars } from './charts';

/** Each target's mean score with its interval, and its rubric criteria: avg, min, max, std. */
export function CriteriaSection({ items }: { items: TargetStatistics[] }) {
  const names = [...new Set(items.flatMap((t) => t.criteria.map((c) => c.name)))];
  const rows = items.flatMap((t) => t.criteria.map((c) => ({ target: t.label, targetId: t.target_id, ...c })));
  const scored = items.filter((t) => t.mean.mean !== null);
  return (
    <div className="space-y-4">
      {scored.length === 0 ? (
        <EmptyState title="No scores in this run yet" description="When the run's scorer has scored outputs (or reviewers have scored them by hand), each target's mean shows here." />
      ) : (
        <Figure
          title="Mean score per target"
          description="Mean of case means per target; whiskers are the 95% bootstrap interval clustered by case."
          chart={(w, h) => (
            <IntervalBars width={w} height={h} valueLabel="Mean score" data={scored.map((t) => ({ name: t.label, value: t.mean.mean, err: errorBar(t.mean.mean, t.mean.low, t.mean.high) }))} />
          )}
          table={{
            rowKey: (t) => t.target_id,
            rows: scored,
            columns: [
              { key: 'target', header: 'Target', cell: (t) => t.label },
              { key: 'mean', header: 'Mean score', cell: (t) => num(t.mean.mean), numeric: true },
              { key: 'ci', header: '95% interval', cell: (t) => interval(t.mean.low, t.mean.high), numeric: true },
              { key: 'pass', header: 'Pass rate', cell: (t) => (t.pass_rate.n ? `${pct(t.pass_rate.estimate)} ${interval(t.pass_rate.low, t.pass_rate.high, (v) => pct(v))}` : '—'), numeric: true },
              { key: 'n', header: 'Scored outputs', cell: (t) => `${t.n_scored} of ${t.n_outputs}`, numeric: true },
            ],
          }}
        />
      )}
      {names.length === 0 ? (
        <EmptyState title="No criteria" description="This scorer gives one value per output. A rubric judge scores each criterion separately; its breakdown shows here." />
      ) : (
        <Figure
          title="Per-criterion breakdown"
          description="Average of each rubric criterion per target; whiskers span the lowest to the highest value given (the table adds the standard deviation and count)."
          chart={(w, h) => (
            <SeriesBars
              width={w}
              height={h}
              withErrors
              series={items.map((t) => ({ key: `t${t.target_id}`, label: t.label }))}
              data={names.map((name) => {
                const row: Record<string, unknown> = { name };
                for (const t of items) {
                  const c = t.criteria.find((x) => x.name === name);
                  if (c) {
                    row[`t${t.target_id}`] = c.avg;
                    row[`t${t.target_id}_err`] = [c.avg - c.min, c.max - c.avg];
                  }
                }
                return row;
              })}
            />
          )}
          table={{
            rowKey: (r) => `${r.targetId}-${r.name}`,
            rows,
            columns: [
              { key: 'criterion', header: 'Criterion', cell: (r) => r.name },
              { key: 'target', header: 'Target', cell: (r) => r.target },
              { key: 'avg', header: 'Average', cell: (r) => num(r.avg), numeric: true },
              { key: 'min', header: 'Min', cell: (r) => num(r.min), numeric: true },
              { key: 'max', header: 'Max', cell: (r) => num(r.max), numeric: true },
              { key: 'std', header: 'Std dev', cell: (r) => num(r.std), numeric: true },
              { key: 'n', header: 'Outputs', cell: (r) => int(r.n), numeric: true },
            ],
          }}
        />
      )}
    </div>
  );
}

const FACETS: { kind: FacetKind; label: string }[] = [
  { kind: 'by_tag', label: 'Tag' },
  { kind: 'by_length', label: 'Input length' },
  { kind: 'by_difficulty', label: 'Difficulty' },
];

type FacetGroup = RunFacets['targets'][number]['by_tag'][number];
/** What the heatmap needs of a row: a run's target, or an experiment's model (by label). */
export type FacetRow = { label: string; target_id?: number } & Record<FacetKind, FacetGroup[]>;

/** Target × facet heatmap: each cell prints its mean, interval and case count; colour only repeats the mean. */
export function FacetHeatmap({ facets, noun = 'target' }: { facets: { targets: FacetRow[] }; noun?: string }) {
  const [kind, setKind] = useState<FacetKind>('by_tag');
  const [asTable, setAsTable] = useState(false);
  const id = useId();
  const keys = [...new Set(facets.targets.flatMap((t) => t[kind].map((g) => g.key)))];
  const means = facets.targets.flatMap((t) => t[kind].map((g) => g.mean.mean)).filter((v): v is number => v !== null);
  const lo = Math.min(...means);
  const hi = Math.max(...means);
  const label = FACETS.find((f) => f.kind === kind)!.label;
  const rows = facets.targets.flatMap((t) => t[kind].map((g) => ({ target: t.label, targetId: t.target_id ?? t.label, ...g })));
  return (
    <Card>
      <section aria-labelledby={`${id}-title`}>
        <CardContent className="space-y-3">
          <div className="flex flex-wrap items-start justify-between gap-3">
            <div className="space-y-1">
              <h3 id={`${id}-title`} className="text-base font-semibold text-zinc-900">
                Facet heatmap: {noun} × {label.toLowerCase()}
              </h3>
              <p className="text-sm text-zinc-600">
                Mean score of each {noun}'s outputs per {label.toLowerCase()}, with its 95% interval and case count; darker cells score higher.
              </p>
            </div>
            <div className="flex items-center gap-2">
              <label htmlFor={`${id}-kind`} className="text-sm text-zinc-700">
                Facet
              </label>
              <Select id={`${id}-kind`} controlSize="sm" value={kind} onChange={(e) => setKind(e.target.value as FacetKind)}>
                {FACETS.map((f) => (
                  <option key={f.kind} value={f.kind}>
                    {f.label}
                  </option>
                ))}
              </Select>
              <button
                type="button"
                aria-pressed={asTable}
                onClick={() => setAsTable((v) => !v)}
                className="inline-flex h-8 items-center rounded-xl border border-zinc-200 bg-white px-3 text-sm font-medium text-zinc-900 hover:bg-zinc-100 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:ring-offset-2"
              >
                {asTable ? 'Show as heatmap' : 'Show as table'}
              </button>
            </div>
          </div>
          {keys.length === 0 ? (
            <EmptyState title={`No ${label.toLowerCase()} facets`} description={kind === 'by_tag' ? "Tag the dataset's cases to break scores down by tag." : kind === 'by_difficulty' ? "Give the dataset's cases a difficulty to break scores down by it." : 'No scored outputs yet.'} />
          ) : asTable ? (
            <DataTable
              caption={`Facets by ${label.toLowerCase()}`}
              rowKey={(r) => `${r.targetId}-${r.key}`}
              rows={rows}
              columns={[
                { key: 'target', header: noun[0].toUpperCase() + noun.slice(1), cell: (r) => r.target },
                { key: 'key', header: label, cell: (r) => r.key },
                { key: 'mean', header: 'Mean score', cell: (r) => num(r.mean.mean), numeric: true },
                { key: 'ci', header: '95% interval', cell: (r) => interval(r.mean.low, r.mean.high), numeric: true },
                { key: 'pass', header: 'Pass rate', cell: (r) => (r.pass_rate.n ? pct(r.pass_rate.estimate) : '—'), numeric: true },
                { key: 'cases', header: 'Cases', cell: (r) => int(r.n_cases), numeric: true },
              ]}
            />
          ) : (
            <div className="overflow-x-auto">
              <table className="border-separate border-spacing-1 text-sm">
                <caption className="sr-only">Mean score by {noun} and {label.toLowerCase()}</caption>
                <thead>
                  <tr>
                    <th scope="col" className="px-2 py-1 text-left font-medium text-zinc-600">
                      {noun[0].toUpperCase() + noun.slice(1)}
                    </th>
                    {keys.map((k) => (
                      <th key={k} scope="col" className="px-2 py-1 text-left font-medium text-zinc-600">
                        {k}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {facets.targets.map((t) => (
                    <tr key={t.target_id ?? t.label}>
                      <th scope="row" className="whitespace-nowrap px-2 py-1 text-left font-medium text-zinc-900">
                        {t.label}
                      </th>
                      {keys.map((k) => {
                        const g = t[kind].find((x) => x.key === k);
                        const v = g?.mean.mean ?? null;
                        return (
                          <td key={k} style={heat(v, lo, hi)} className="min-w-28 rounded-md px-2 py-2 tabular-nums">
                            {g && v !== null ? (
                              <>
                                <span className="font-semibold">{num(v)}</span>
                                <span className="block text-xs">{interval(g.mean.low, g.mean.high)}</span>
                                <span className="block text-xs">n={g.n_cases}</span>
                              </>
                            ) : (
                              <span>no scores</span>
                            )}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </CardContent>
      </section>
    </Card>
  );
}

/** The win matrix, Bradley–Terry ratings with intervals, and each judge's position bias. */
export function PairwiseSection({ summary }: { summary: ComparisonSummary }) {
  if (summary.pairs.length === 0) {
    return (
      <EmptyState
        title="No pairwise comparisons in this run"
        description="Compare two of the run's targets with a pairwise judge (from the run's page) to see which one wins, the Bradley–Terry ratings and the judges' position bias."
      />
    );
  }
  const m = winMatrix(summary.pairs);
  const r = summary.ratings;
  const rated = r.items.filter((x) => x.rating !== null);
  return (
    <div className="space-y-4">
      <Card>
        <section aria-labelledby="win-matrix-title">
          <CardContent className="space-y-3">
            <h3 id="win-matrix-title" className="text-base font-semibold text-zinc-900">
              Pairwise win matrix
            </h3>
            <p className="text-sm text-zinc-600">Each cell: how often the row's target beat the column's (a tie or a split verdict counts half), over every judge.</p>
            <div className="overflow-x-auto">
              <table className="border-separate border-spacing-1 text-sm">
                <caption className="sr-only">Win rate of the row target against the column target</caption>
                <thead>
                  <tr>
                    <th scope="col" className="px-2 py-1 text-left font-medium text-zinc-600">
                      Row beats column
                    </th>
                    {m.targets.map((t) => (
                      <th key={t.id} scope="col" className="px-2 py-1 text-left font-medium text-zinc-600">
                        {t.label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {m.targets.map((row) => (
                    <tr key={row.id}>
                      <th scope="row" className="whitespace-nowrap px-2 py-1 text-left font-medium text-zinc-900">
                        {row.label}
                      </th>
                      {m.targets.map((col) => {
                        if (row.id === col.id)
                          return (
                            <td key={col.id} className="px-2 py-2 text-zinc-500">
                              —
                            </td>
                          );
                        const c = m.cell(row.id, col.id);
                        return (
                          <td key={col.id} style={heat(c.rate, 0, 1)} className="min-w-28 rounded-md px-2 py-2 tabular-nums">
                            {c.games ? (
                              <>
                                <span className="font-semibold">{pct(c.rate, 0)}</span>
                                <span className="block text-xs">
                                  {c.wins}–{c.losses}–{c.draws} of {c.games}
                                </span>
                              </>
                            ) : (
                              'no games'
                            )}
                          </td>
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p className="text-xs text-zinc-600">Second line: wins–losses–ties (including split verdicts) of all games.</p>
          </CardContent>
        </section>
      </Card>
      {r.available && rated.length > 0 ? (
        <Figure
          title="Bradley–Terry ratings"
          description={`Ratings on an Elo-like scale (mean 1000; +400 means 10:1 odds) from ${r.n_comparisons} judged comparisons; whiskers are 95% bootstrap intervals.`}
          chart={(w, h) => (
            <IntervalBars width={w} height={h} valueLabel="Rating" domain={['auto', 'auto']} data={rated.map((x) => ({ name: x.label, value: x.rating, err: errorBar(x.rating, x.low, x.high) }))} />
          )}
          table={{
            rowKey: (x) => x.target_id,
            rows: r.items,
            columns: [
              { key: 'target', header: 'Target', cell: (x) => x.label },
              { key: 'rating', header: 'Rating', cell: (x) => num(x.rating, 0), numeric: true },
              { key: 'ci', header: '95% interval', cell: (x) => interval(x.low, x.high, (v) => num(v, 0)), numeric: true },
              { key: 'record', header: 'Wins / ties / losses', cell: (x) => `${x.wins} / ${x.ties} / ${x.losses}`, numeric: true },
              { key: 'flags', header: 'Notes', cell: (x) => x.flags.join(', ') || '—' },
            ],
          }}
        />
      ) : (
        <EmptyState title="No ratings" description={r.message ?? 'The comparisons do not give ratings yet.'} />
      )}
      <Figure
        title="Position bias"
        description="Share of judged comparisons whose verdict changed when the two answers swapped places, per judge and pair; whiskers are 95% Wilson intervals."
        chart={(w, h) => (
          <IntervalBars
            width={w}
            height={h}
            unit="%"
            domain={[0, 100]}
            valueLabel="Position bias (%)"
            data={summary.pairs.map((p) => {
              const b = p.position_bias;
              const v = b.estimate === null ? null : b.estimate * 100;
              return { name: `${p.judge}: ${p.target_a_label} vs ${p.target_b_label}`, value: v, err: errorBar(v, b.low === null ? null : b.low * 100, b.high === null ? null : b.high * 100) };
            })}
          />
        )}
        table={{
          rowKey: (p) => `${p.scorer_version_id}-${p.judge}-${p.target_a_id}-${p.target_b_id}`,
          rows: summary.pairs,
          columns: [
            { key: 'judge', header: 'Judge', cell: (p) => p.judge },
            { key: 'pair', header: 'Pair', cell: (p) => `${p.target_a_label} vs ${p.target_b_label}` },
            { key: 'bias', header: 'Position bias', cell: (p) => pct(p.position_bias.estimate), numeric: true },
            { key: 'ci', header: '95% interval', cell: (p) => interval(p.position_bias.low, p.position_bias.high, (v) => pct(v)), numeric: true },
            { key: 'k', header: 'Split verdicts', cell: (p) => `${p.position_bias.k} of ${p.position_bias.n}`, numeric: true },
            { key: 'record', header: 'A wins / B wins / ties', cell: (p) => `${p.a_wins} / ${p.b_wins} / ${p.ties}`, numeric: true },
            { key: 'errors', header: 'Failed', cell: (p) => int(p.errors), numeric: true },
          ],
        }}
      />
    </div>
  );
}

/** Inter-judge agreement (Krippendorff's alpha, Cohen's kappa) and judge–human agreement. */
export function AgreementSection({ items }: { items: TargetStatistics[] }) {
  const panel = items.filter((t) => t.agreement !== null);
  const human = items.flatMap((t) => t.judge_human.map((j) => ({ target: t.label, targetId: t.target_id, ...j })));
  if (panel.length === 0 && human.length === 0) {
    return (
      <EmptyState
        title="No agreement to measure"
        description="Agreement needs the same outputs scored twice: give the LLM judge a panel of two or more judge models, or have reviewers score some judged outputs by hand."
      />
    );
  }
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      {panel.length > 0 && (
        <Figure
          title="Inter-judge agreement"
          description="Krippendorff's alpha (interval level) between the scorer's judges per target: 1 is perfect agreement, 0 is chance. Cohen's kappa on pass/fail for exactly two judges."
          chart={(w, h) => <IntervalBars width={w} height={h} valueLabel="Alpha" domain={[-1, 1]} data={panel.map((t) => ({ name: t.label, value: t.agreement!.alpha.alpha }))} />}
          table={{
            rowKey: (t) => t.target_id,
            rows: panel,
            columns: [
              { key: 'target', header: 'Target', cell: (t) => t.label },
              { key: 'alpha', header: "Krippendorff's alpha", cell: (t) => num(t.agreement!.alpha.alpha), numeric: true },
              { key: 'kappa', header: "Cohen's kappa", cell: (t) => num(t.agreement!.kappa?.kappa ?? null), numeric: true },
              { key: 'raters', header: 'Judges', cell: (t) => t.agreement!.raters.map((x) => `${x.source} (mean ${num(x.mean)})`).join(', ') },
              { key: 'units', header: 'Outputs rated twice', cell: (t) => int(t.agreement!.alpha.n_units), numeric: true },
            ],
          }}
        />
      )}
      {human.length > 0 && (
        <Figure
          title="Judge–human agreement"
          description="How often a judge gave the same value as the people who scored the same outputs by hand, with alpha and weighted kappa."
          chart={(w, h) => (
            <IntervalBars
              width={w}
              height={h}
              unit="%"
              domain={[0, 100]}
              valueLabel="Exact agreement (%)"
              data={human.map((j) => ({ name: `${j.judge ?? 'All judges'} · ${j.target}`, value: j.exact_agreement === null ? null : j.exact_agreement * 100 }))}
            />
          )}
          table={{
            rowKey: (j, i) => `${j.targetId}-${j.judge ?? 'all'}-${i}`,
            rows: human,
            columns: [
              { key: 'judge', header: 'Judge', cell: (j) => j.judge ?? 'All judges (mean)' },
              { key: 'target', header: 'Target', cell: (j) => j.target },
              { key: 'exact', header: 'Exact agreement', cell: (j) => pct(j.exact_agreement), numeric: true },
              { key: 'mad', header: 'Mean abs. difference', cell: (j) => num(j.mean_abs_difference), numeric: true },
              { key: 'alpha', header: 'Alpha', cell: (j) => num(j.alpha.alpha), numeric: true },
              { key: 'kappa', header: 'Kappa', cell: (j) => num(j.kappa.kappa), numeric: true },
              { key: 'n', header: 'Outputs both scored', cell: (j) => int(j.n), numeric: true },
            ],
          }}
        />
      )}
    </div>
  );
}
