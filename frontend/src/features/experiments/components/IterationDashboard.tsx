import { Badge } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import type { CI, Delta, Iteration } from '../api';
import { bestModelOf, headline, modelsOf, winRate } from '../lib/aggregate';
import { percentCI, signedCI, verdictLabel, verdictTone, withCI } from '../lib/numbers';

function Kpi({ label, value, sub, testId }: { label: string; value: string; sub?: string; testId?: string }) {
  return (
    <div className="min-w-0 rounded-xl border border-zinc-200 bg-white p-3">
      <dt className="text-sm text-zinc-600">{label}</dt>
      <dd className="break-words text-base font-semibold tabular-nums" data-testid={testId}>
        {value}
      </dd>
      {sub && <dd className="text-sm text-zinc-600">{sub}</dd>}
    </div>
  );
}

/** A bar for a mean on 0..1 with its CI drawn over it. */
function CIBar({ ci }: { ci: CI }) {
  if (ci.mean === null) return null;
  const pct = (x: number) => `${Math.max(0, Math.min(100, x * 100))}%`;
  return (
    <div className="relative h-3 w-full rounded-xl bg-zinc-100" aria-hidden="true">
      <div className="h-3 rounded-xl bg-indigo-200" style={{ width: pct(ci.mean) }} />
      {ci.low !== null && ci.high !== null && <div className="absolute top-1 h-1 bg-indigo-700" style={{ left: pct(ci.low), width: `calc(${pct(ci.high)} - ${pct(ci.low)})` }} />}
    </div>
  );
}

const deltaText = (d: Delta | null | undefined) => (d ? signedCI(d.delta, d.low, d.high, 3) : '—');

/** FR-RV-001/003/004: one iteration's scores with CIs, deltas with verdicts, win rate, criteria, facets. */
export function IterationDashboard({ iteration, previous }: { iteration: Iteration; previous: Iteration | null }) {
  const models = modelsOf(iteration);
  const top = headline(models, bestModelOf(iteration));
  const before = previous ? modelsOf(previous).find((m) => m.model === top?.model) : undefined;
  const cost = iteration.execution_micros + iteration.judging_micros + iteration.refinement_micros;
  if (!top) return <p className="text-sm text-zinc-600">Scores appear once this iteration is aggregated.</p>;
  // the server's (pairwise verdicts when there is a pairwise judge); older aggregates lack it
  const win = top.win_rate ?? (before ? winRate(top.cases, before.cases) : null);
  const winSource = top.win_rate?.source === 'pairwise' ? 'pairwise judge' : 'per-case composites';
  const criteria = Object.keys(top.all.criteria);
  const c = top.all.composite;
  return (
    <div className="space-y-4" data-testid="iteration-dashboard">
      <dl className="grid grid-cols-1 gap-2 sm:grid-cols-2 xl:grid-cols-4">
        <Kpi label={`Composite, ${top.model} (95% CI)`} value={withCI(c.mean, c.low, c.high, 3)} sub={`${c.n ?? '?'} cases · cost ${formatMicros(cost)}`} testId="kpi-composite" />
        <Kpi label="Δ vs previous (95% CI)" value={top.delta ? deltaText(top.delta) : '— (first iteration)'} sub={top.delta ? verdictLabel(top.delta.verdict) : undefined} testId="kpi-delta" />
        <Kpi
          label="Held-out Δ (95% CI)"
          value={top.holdout_delta ? deltaText(top.holdout_delta) : top.holdout ? withCI(top.holdout.composite.mean, top.holdout.composite.low, top.holdout.composite.high, 3) : '—'}
          sub={top.holdout_delta ? verdictLabel(top.holdout_delta.verdict) : 'Held-out composite'}
          testId="kpi-holdout"
        />
        <Kpi label="Win rate vs previous (per case, 95% CI)" value={win ? percentCI(win.mean, win.low, win.high) : '—'} sub={win ? `${win.n ?? '?'} paired cases · ${winSource}` : undefined} testId="kpi-winrate" />
      </dl>
      <section aria-label="Scores by model" className="space-y-2">
        <h4 className="text-sm font-semibold">Score breakdown by model</h4>
        <div className="overflow-x-auto rounded-xl border border-zinc-200">
          <table className="w-full text-sm">
            <thead className="bg-zinc-50 text-left text-zinc-600">
              <tr>
                <th className="px-3 py-2 font-medium">Model</th>
                <th className="px-3 py-2 font-medium">Composite [95% CI]</th>
                <th className="px-3 py-2 font-medium">Δ [95% CI]</th>
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <tr key={m.model} className="border-t border-zinc-100">
                  <td className="break-words px-3 py-2">{m.model}</td>
                  <td className="px-3 py-2 tabular-nums">{withCI(m.all.composite.mean, m.all.composite.low, m.all.composite.high, 3)}</td>
                  <td className="px-3 py-2 tabular-nums">
                    {deltaText(m.delta)} {m.delta?.verdict && <Badge tone={verdictTone(m.delta.verdict)}>{verdictLabel(m.delta.verdict)}</Badge>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      {criteria.length > 0 && (
        <section aria-label="Criterion analysis" className="space-y-2">
          <h4 className="text-sm font-semibold">Criterion analysis ({top.model}, 0–1)</h4>
          <ul className="space-y-2">
            {criteria.map((name) => {
              const ci = top.all.criteria[name];
              return (
                <li key={name} className="grid gap-1 sm:grid-cols-[10rem_1fr_12rem] sm:items-center">
                  <span className="break-words text-sm">
                    {name} {iteration.weakest_criteria.includes(name) && <Badge tone="warning">weak</Badge>}
                  </span>
                  <CIBar ci={ci} />
                  <span className="text-sm tabular-nums text-zinc-700">{withCI(ci.mean, ci.low, ci.high, 3)}</span>
                </li>
              );
            })}
          </ul>
        </section>
      )}
      <section aria-label="Refinement set vs held-out set" className="space-y-2">
        <h4 className="text-sm font-semibold">Refinement set vs held-out set</h4>
        <div className="overflow-x-auto rounded-xl border border-zinc-200">
          <table className="w-full text-sm">
            <thead className="bg-zinc-50 text-left text-zinc-600">
              <tr>
                <th className="px-3 py-1 font-medium">Model</th>
                <th className="px-3 py-1 font-medium">Refinement set</th>
                <th className="px-3 py-1 font-medium">Held-out (never shown to the refiner)</th>
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <tr key={m.model} className="border-t border-zinc-100">
                  <td className="px-3 py-1">{m.model}</td>
                  <td className="px-3 py-1 tabular-nums">
                    {m.refinement ? withCI(m.refinement.composite.mean, m.refinement.composite.low, m.refinement.composite.high, 3) : '—'}
                    {m.refinement_delta && <span className="block text-zinc-500">Δ {deltaText(m.refinement_delta)}</span>}
                  </td>
                  <td className="px-3 py-1 tabular-nums">
                    {m.holdout ? withCI(m.holdout.composite.mean, m.holdout.composite.low, m.holdout.composite.high, 3) : '—'}
                    {m.holdout_delta && <span className="block text-zinc-500">Δ {deltaText(m.holdout_delta)} {verdictLabel(m.holdout_delta.verdict)}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </div>
  );
}
