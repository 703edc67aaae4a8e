import { Badge, Table, TBody, TD, TH, THead, TR, type BadgeTone } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { agreementReading, criterionLabel, formatMean, type Agreement, type AgreementLevel, type JudgeSummary } from '../api';

const TONES: Record<AgreementLevel, BadgeTone> = { none: 'neutral', strong: 'success', moderate: 'indigo', weak: 'warning', against: 'danger' };

/** How far the judges agree on each criterion (Krippendorff's alpha), in numbers and in words. */
export function AgreementTable({ agreement, overall, judges }: { agreement: Agreement[]; overall: Agreement; judges: number }) {
  const rows = agreement.some((a) => a.criterion === overall.criterion) ? agreement : [...agreement, { ...overall, criterion: 'overall' }];
  return (
    <Table aria-label="Agreement between judges">
      <THead>
        <TR>
          <TH>Criterion</TH>
          <TH>Alpha</TH>
          <TH>Reading</TH>
          <TH>Questions compared</TH>
        </TR>
      </THead>
      <TBody>
        {rows.map((a) => {
          const reading = agreementReading(a.alpha, judges);
          const derived = a.criterion === 'overall' && !agreement.some((x) => x.criterion === 'overall');
          return (
            <TR key={a.criterion}>
              <TD>
                {criterionLabel(a.criterion)}
                {derived && <span className="text-zinc-500"> (mean of the criteria)</span>}
              </TD>
              <TD className="tabular-nums" data-testid={`alpha-${a.criterion}`}>
                {a.alpha === null ? '—' : a.alpha.toFixed(2)}
              </TD>
              <TD>
                <Badge tone={TONES[reading.level]} className="mr-2">
                  {reading.level === 'none' ? 'n/a' : reading.level === 'against' ? 'disagree' : reading.level}
                </Badge>
                <span className="text-sm text-zinc-700">{reading.text}</span>
              </TD>
              <TD className="tabular-nums">{a.n_units}</TD>
            </TR>
          );
        })}
      </TBody>
    </Table>
  );
}

/** Each judge's mean rating per criterion (with its 95% interval), what it rated, and its cost. */
export function JudgeMeansTable({ judges, criteria }: { judges: JudgeSummary[]; criteria: string[] }) {
  const showOverall = !criteria.includes('overall');
  return (
    <Table aria-label="Mean rating per judge">
      <THead>
        <TR>
          <TH>Judge</TH>
          {criteria.map((c) => (
            <TH key={c}>{criterionLabel(c)}</TH>
          ))}
          {showOverall && <TH>Overall</TH>}
          <TH>Rated</TH>
          <TH>Failed</TH>
          <TH>Cost</TH>
        </TR>
      </THead>
      <TBody>
        {judges.map((j) => (
          <TR key={j.ref}>
            <TD className="font-medium">{j.name}</TD>
            {criteria.map((c) => (
              <TD key={c} className="tabular-nums">
                {j.means[c] ? formatMean(j.means[c]) : '—'}
              </TD>
            ))}
            {showOverall && <TD className="tabular-nums">{formatMean(j.overall)}</TD>}
            <TD className="tabular-nums">{j.scored}</TD>
            <TD className="tabular-nums">{j.failed}</TD>
            <TD className="tabular-nums">{formatMicros(j.cost_micros)}</TD>
          </TR>
        ))}
      </TBody>
    </Table>
  );
}
