import { EmptyState, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { formatRate, RATE_HELP, sentOf, skippedWhy } from '@/lib/rates';
import { useSummary } from '../hooks/useRuns';

const ms = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${Math.round(v).toLocaleString('en-US')} ms`);

/** Per target: success rate, counts, latency and time-to-first-token percentiles, tokens and cost (GET /summary). */
export function SummaryTable({ projectId, runId, status = '' }: { projectId: number; runId: number; status?: string }) {
  const summary = useSummary(projectId, runId);
  if (summary.isPending) return <LoadingRows label="Loading the summary" rows={2} />;
  if (summary.isError) return <ErrorState title="Could not load the summary" error={summary.error} onRetry={() => summary.refetch()} />;
  const s = summary.data;
  if (s.targets.length === 0) return <EmptyState title="No targets yet" />;
  const skipped = s.targets.reduce((n, t) => n + t.skipped, 0);
  const total = s.targets.reduce((n, t) => n + t.total, 0);
  const sent = s.targets.reduce((n, t) => n + sentOf(t), 0);
  const succeeded = s.targets.reduce((n, t) => n + t.succeeded, 0);
  const why = skippedWhy(status);
  return (
    <div className="space-y-2">
      <p className="text-sm text-zinc-600">
        <abbr title={RATE_HELP.success} className="no-underline">Success rate</abbr>, all targets:{' '}
        <span className="font-semibold text-zinc-900" data-testid="summary-success-rate">{formatRate(s.success_rate)}</span>
        <span data-testid="summary-sent">
          {' '}
          · {succeeded} of {sent} calls sent
        </span>
        {skipped > 0 && (
          <span className="text-amber-800" data-testid="summary-skipped">
            {' '}
            · {skipped} of {total} cells never sent{why ? ` (${why})` : ''}, not in the rate
          </span>
        )}
      </p>
      <div className="overflow-x-auto">
        <Table aria-label="Summary per target">
          <THead>
            <TR>
              <TH>Target</TH>
              <TH className="text-right">Success rate</TH>
              <TH className="text-right">Succeeded / failed / skipped</TH>
              <TH className="text-right">Latency p50 / p95</TH>
              <TH className="text-right">TTFT p50 / p95</TH>
              <TH className="text-right">Tokens in / out</TH>
              <TH className="text-right">Cost</TH>
            </TR>
          </THead>
          <TBody>
            {s.targets.map((t) => (
              <TR key={t.target_id}>
                <TD>{t.label}</TD>
                <TD className="text-right tabular-nums">{formatRate(t.success_rate)}</TD>
                <TD className="text-right tabular-nums">
                  {t.succeeded} / {t.failed} / {t.skipped}
                  {t.pending > 0 && <span className="text-zinc-500"> ({t.pending} pending)</span>}
                </TD>
                <TD className="text-right tabular-nums">
                  {ms(t.latency_p50_ms)} / {ms(t.latency_p95_ms)}
                </TD>
                <TD className="text-right tabular-nums">
                  {ms(t.ttft_p50_ms)} / {ms(t.ttft_p95_ms)}
                </TD>
                <TD className="text-right tabular-nums">
                  {t.tokens_in.toLocaleString('en-US')} / {t.tokens_out.toLocaleString('en-US')}
                </TD>
                <TD className="text-right tabular-nums">
                  {formatMicros(t.spent_micros)}
                  {t.cached > 0 && <span className="block text-sm text-zinc-500">{t.cached} cached</span>}
                </TD>
              </TR>
            ))}
          </TBody>
        </Table>
      </div>
    </div>
  );
}
