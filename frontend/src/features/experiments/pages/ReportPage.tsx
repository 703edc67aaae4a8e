import { Link, useParams } from 'react-router-dom';
import { useQuery } from '@tanstack/react-query';
import { Badge, ErrorState, Skeleton, buttonClasses } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { experimentPath, request } from '../api';
import { expKeys, useExperiment } from '../hooks/useExperiments';
import { EXPORTS, readReport } from '../lib/report';
import { signedCI, verdictLabel, withCI } from '../lib/numbers';
import { ImportBundle } from '../components/ImportBundle';

const duration = (s: number | null) => (s === null ? '—' : s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

/** FR-IL-002: summary, best version (chosen on held-out cases), first vs last, costs, next steps, exports. */
export function ReportPage() {
  const projectId = Number(useParams().projectId);
  const experimentId = Number(useParams().experimentId);
  const experiment = useExperiment(projectId, experimentId);
  const report = useQuery({
    queryKey: expKeys.report(projectId, experimentId),
    queryFn: ({ signal }) => request<unknown>('GET', `${experimentPath(projectId, experimentId)}/report`, { signal }),
  });
  const back = `/projects/${projectId}/experiments/${experimentId}`;
  if (report.isPending || experiment.isPending) return <Skeleton className="h-64 w-full" />;
  if (report.isError) return <ErrorState title="Could not load the report" error={report.error} onRetry={() => report.refetch()} retrying={report.isFetching} />;
  const r = readReport(report.data);
  const name = experiment.data?.name ?? 'Experiment';
  const exportHref = (key: string) => `${experimentPath(projectId, experimentId)}/report/export?format=${key}`;
  const fvl = r.firstVsLast;
  return (
    <div className="min-w-0 space-y-4">
      <p className="text-sm">
        <Link to={back} className="text-zinc-600 hover:text-zinc-900">
          ← {name}
        </Link>
      </p>
      <h2 className="text-lg font-semibold">Final report — {name}</h2>
      {r.objective && <p className="whitespace-pre-wrap break-words text-sm text-zinc-700">{r.objective}</p>}
      <section aria-label="Summary" className="rounded-xl border border-zinc-200 bg-white p-4">
        <h3 className="mb-2 text-base font-semibold">Summary</h3>
        <dl className="grid grid-cols-1 gap-2 text-sm sm:grid-cols-2 lg:grid-cols-4">
          <div><dt className="text-zinc-600">Iterations</dt><dd className="font-semibold" data-testid="report-iterations">{r.iterations.length}</dd></div>
          <div><dt className="text-zinc-600">Total cost</dt><dd className="font-semibold" data-testid="report-cost">{formatMicros(r.totalMicros)}</dd></div>
          <div><dt className="text-zinc-600">Total time</dt><dd className="font-semibold">{duration(r.durationSeconds)}</dd></div>
          <div><dt className="text-zinc-600">Stopped because</dt><dd className="break-words font-semibold" data-testid="report-stop">{r.stopReason ?? 'still running'}</dd></div>
        </dl>
      </section>
      <div className="grid gap-4 lg:grid-cols-2">
        <section aria-label="Best version" className="space-y-1 rounded-xl border border-zinc-200 bg-white p-4 text-sm">
          <h3 className="text-base font-semibold">Best version</h3>
          {r.best ? (
            <>
              <p className="flex flex-wrap items-center gap-2" data-testid="report-best">
                <span className="font-semibold">v{r.best.version ?? '?'} (iteration {r.best.iteration ?? '?'})</span>
                {r.best.overfitting && <Badge tone="warning">Likely overfitting</Badge>}
              </p>
              <p>
                {r.best.chosenOn === 'holdout' ? 'Held-out' : 'All-case'} composite: {withCI(r.best.score.mean, r.best.score.low, r.best.score.high, 3)}
              </p>
              <p className="text-zinc-600">{r.best.chosenOn === 'holdout' ? 'Chosen on held-out cases the refiner never saw.' : 'Chosen on all cases (none were held out).'}</p>
            </>
          ) : (
            <p className="text-zinc-600">No scored version yet.</p>
          )}
        </section>
        <section aria-label="First vs last" className="space-y-1 rounded-xl border border-zinc-200 bg-white p-4 text-sm">
          <h3 className="text-base font-semibold">First vs last iteration</h3>
          {fvl?.all ? (
            <>
              <p>
                Iteration {fvl.first} → {fvl.last}: {fvl.all.a?.toFixed(3) ?? '—'} → {fvl.all.b?.toFixed(3) ?? '—'}
              </p>
              <p data-testid="report-delta">
                Δ {signedCI(fvl.all.delta, fvl.all.low, fvl.all.high, 3)} — <span className="font-semibold">{verdictLabel(fvl.all.verdict)}</span>
              </p>
              {fvl.holdout && (
                <p>
                  Held-out Δ {signedCI(fvl.holdout.delta, fvl.holdout.low, fvl.holdout.high, 3)} — {verdictLabel(fvl.holdout.verdict)}
                </p>
              )}
            </>
          ) : (
            <p className="text-zinc-600" data-testid="report-delta">Needs at least two scored iterations.</p>
          )}
        </section>
        <section aria-label="Cost by phase" className="space-y-1 rounded-xl border border-zinc-200 bg-white p-4 text-sm">
          <h3 className="text-base font-semibold">Cost by phase</h3>
          <ul>
            {r.costByPhase.map((c) => (
              <li key={c.phase} className="flex justify-between gap-2">
                <span className="capitalize">{c.phase}</span>
                <span className="tabular-nums">{formatMicros(c.micros)}</span>
              </li>
            ))}
          </ul>
          <p className="text-zinc-600">
            Tokens: {r.tokensIn?.toLocaleString('en-US') ?? '—'} in, {r.tokensOut?.toLocaleString('en-US') ?? '—'} out
          </p>
        </section>
        <section aria-label="Recommendations" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-4 text-sm">
          <h3 className="text-base font-semibold">Recommendations</h3>
          <p>
            Model for production: <span className="font-semibold">{r.recommendedModel ?? '—'}</span>
          </p>
          {r.models.length > 0 && (
            <ul>
              {r.models.map((m) => (
                <li key={m.name} className="break-words">
                  {m.name}: {withCI(m.score.mean, m.score.low, m.score.high, 3)}
                  {m.costPerCase !== null ? `, ${formatMicros(m.costPerCase)} per case` : ''}
                </li>
              ))}
            </ul>
          )}
          <div>
            <p className="font-medium">Remaining weak criteria</p>
            {r.weakCriteria.length ? (
              <ul className="list-disc pl-5">
                {r.weakCriteria.map((c) => (
                  <li key={c.name}>
                    {c.name}
                    {c.mean !== null ? ` (${c.mean.toFixed(3)})` : ''}
                  </li>
                ))}
              </ul>
            ) : (
              <p className="text-zinc-600">None flagged.</p>
            )}
          </div>
          <div>
            <p className="font-medium">Next steps</p>
            {r.nextSteps.length ? <ul className="list-disc pl-5">{r.nextSteps.map((c) => <li key={c} className="break-words">{c}</li>)}</ul> : <p className="text-zinc-600">—</p>}
          </div>
        </section>
      </div>
      <section aria-label="Iterations" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-4 text-sm">
        <h3 className="text-base font-semibold">Iterations (composite [95% CI])</h3>
        <div className="overflow-x-auto">
          <table className="w-full">
            <thead className="text-left text-zinc-600">
              <tr>
                <th className="py-1 pr-2 font-medium">#</th>
                <th className="py-1 pr-2 font-medium">All cases</th>
                <th className="py-1 pr-2 font-medium">Held-out</th>
                <th className="hidden py-1 pr-2 font-medium sm:table-cell">Spend</th>
              </tr>
            </thead>
            <tbody>
              {r.iterations.map((it) => (
                <tr key={it.number} className="border-t border-zinc-100">
                  <td className="py-1 pr-2">
                    {it.number} (v{it.promptVersion ?? '?'}) {it.overfitting && <Badge tone="warning">overfitting?</Badge>}
                  </td>
                  <td className="py-1 pr-2 tabular-nums">{withCI(it.all.mean, it.all.low, it.all.high, 3)}</td>
                  <td className="py-1 pr-2 tabular-nums">{withCI(it.holdout.mean, it.holdout.low, it.holdout.high, 3)}</td>
                  <td className="hidden py-1 pr-2 tabular-nums sm:table-cell">{formatMicros(it.spent)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-label="Downloads" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-4">
        <h3 className="text-base font-semibold">Downloads</h3>
        <div className="flex flex-wrap gap-2">
          {EXPORTS.map((x) => (
            <a key={x.key} href={exportHref(x.key)} download className={buttonClasses(x.key === 'pdf' ? 'primary' : 'secondary')}>
              {x.label}
            </a>
          ))}
        </div>
        <div className="border-t border-zinc-100 pt-2">
          <p className="mb-1 text-sm text-zinc-600">Import a bundle as a new experiment:</p>
          <ImportBundle projectId={projectId} />
        </div>
      </section>
    </div>
  );
}
