import { Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import type { ComparisonSummary } from './api';

const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(0)}%`);
const elo = (x: number | null) => (x === null ? '—' : x.toFixed(0));

/** Bradley–Terry ratings (with their intervals) and each judge's tallies and position bias. */
export function PairwiseResults({ summary }: { summary: ComparisonSummary }) {
  const r = summary.ratings;
  const conf = `${Math.round(r.confidence * 100)}%`;
  return (
    <div className="space-y-4">
      <div className="space-y-2">
        <h3 className="text-base font-semibold">Bradley–Terry ratings</h3>
        {r.available ? (
          <div className="overflow-x-auto">
            <Table aria-label="Bradley–Terry ratings">
              <THead>
                <TR>
                  <TH>Target</TH>
                  <TH className="text-right">Rating</TH>
                  <TH className="text-right">{conf} interval</TH>
                  <TH className="text-right">Wins · ties · losses</TH>
                </TR>
              </THead>
              <TBody>
                {r.items.map((t) => (
                  <TR key={t.target_id} data-testid="bt-rating">
                    <TD>{t.label}</TD>
                    <TD className="text-right tabular-nums">{elo(t.rating)}</TD>
                    <TD className="text-right tabular-nums">
                      {elo(t.low)} – {elo(t.high)}
                    </TD>
                    <TD className="text-right tabular-nums">
                      {t.wins} · {t.ties} · {t.losses}
                    </TD>
                  </TR>
                ))}
              </TBody>
            </Table>
          </div>
        ) : (
          <p className="text-sm text-zinc-600">{r.message ?? 'No ratings yet.'}</p>
        )}
        <p className="text-sm text-zinc-500">
          From {r.n_comparisons.toLocaleString('en-US')} judged comparisons; mean 1000, +400 is 10:1 odds. A tie, or two orders that
          disagree, counts half a win to each side.
        </p>
      </div>
      <div className="space-y-2">
        <h3 className="text-base font-semibold">Per judge</h3>
        <div className="overflow-x-auto">
          <Table aria-label="Comparisons per judge">
            <THead>
              <TR>
                <TH>Judge</TH>
                <TH>A vs B</TH>
                <TH className="text-right">A · B · tie</TH>
                <TH className="text-right">Orders disagree</TH>
                <TH className="text-right">Position bias</TH>
                <TH className="text-right">Errors</TH>
              </TR>
            </THead>
            <TBody>
              {summary.pairs.map((p) => (
                <TR key={`${p.scorer_version_id}-${p.judge}-${p.target_a_id}-${p.target_b_id}`} data-testid="pair-row">
                  <TD>
                    {p.judge} <span className="text-zinc-500">({p.scorer_name} v{p.version})</span>
                  </TD>
                  <TD>
                    {p.target_a_label} vs {p.target_b_label}
                  </TD>
                  <TD className="text-right tabular-nums">
                    {p.a_wins} · {p.b_wins} · {p.ties}
                  </TD>
                  <TD className="text-right tabular-nums">{p.disagreements}</TD>
                  <TD className="text-right tabular-nums" data-testid="position-bias">
                    {pct(p.position_bias.estimate)}
                    {p.position_bias.low !== null && p.position_bias.high !== null && (
                      <span className="text-zinc-500">
                        {' '}
                        ({pct(p.position_bias.low)}–{pct(p.position_bias.high)})
                      </span>
                    )}
                  </TD>
                  <TD className="text-right tabular-nums">{p.errors}</TD>
                </TR>
              ))}
            </TBody>
          </Table>
        </div>
      </div>
    </div>
  );
}
