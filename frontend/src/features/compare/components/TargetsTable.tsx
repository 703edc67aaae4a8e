import { Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { signed, type DiffTarget } from '../api';

/** Per matched target (by label, else by model): its counters and verdict. */
export function TargetsTable({ targets }: { targets: DiffTarget[] }) {
  return (
    <section aria-labelledby="diff-targets-heading" className="space-y-3">
      <h2 id="diff-targets-heading" className="text-base font-semibold text-zinc-900">
        Per target
      </h2>
      <Table aria-label="Comparison per target">
        <THead>
          <TR>
            <TH>Base target</TH>
            <TH>Head target</TH>
            <TH className="text-right">Fixed</TH>
            <TH className="text-right">Regressed</TH>
            <TH className="text-right">New fail</TH>
            <TH className="text-right">Difference [95% interval]</TH>
            <TH>Verdict</TH>
          </TR>
        </THead>
        <TBody>
          {targets.map((t) => (
            <TR key={`${t.base_target_id ?? 'none'}-${t.head_target_id ?? 'none'}`}>
              <TD>{t.base_label ?? <span className="text-zinc-600">not in base</span>}</TD>
              <TD>{t.head_label ?? <span className="text-zinc-600">not in head</span>}</TD>
              <TD className="text-right tabular-nums">{t.counts.fixed}</TD>
              <TD className="text-right tabular-nums">{t.counts.regressed}</TD>
              <TD className="text-right tabular-nums">{t.counts.new_fail}</TD>
              <TD className="text-right tabular-nums">
                {t.comparison ? `${signed(t.comparison.mean_difference)} [${signed(t.comparison.low)}, ${signed(t.comparison.high)}]` : '—'}
              </TD>
              <TD>{t.comparison?.verdict ?? '—'}</TD>
            </TR>
          ))}
        </TBody>
      </Table>
    </section>
  );
}
