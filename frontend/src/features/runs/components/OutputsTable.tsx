import { useState } from 'react';
import { Pager, Badge, EmptyState, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR, type BadgeTone } from '@/components/ui';
import type { Output } from '@/api/types';
import { OUTPUTS_PAGE_SIZE, useOutputs } from '../hooks/useRuns';

const outputTone: Record<Output['status'], BadgeTone> = {
  pending: 'neutral',
  running: 'indigo',
  succeeded: 'success',
  failed: 'danger',
};

export function OutputsTable({ projectId, runId }: { projectId: number; runId: number }) {
  const [page, setPage] = useState(1);
  const outputs = useOutputs(projectId, runId, page);

  if (outputs.isPending) return <LoadingRows label="Loading outputs" rows={4} />;
  if (outputs.isError) {
    return <ErrorState title="Could not load outputs" error={outputs.error} onRetry={() => outputs.refetch()} retrying={outputs.isFetching} />;
  }
  const { items, total } = outputs.data;
  if (items.length === 0) {
    return <EmptyState title="No outputs yet" description="Outputs appear here as the models answer." />;
  }
  const pageCount = Math.max(1, Math.ceil(total / (outputs.data.page_size || OUTPUTS_PAGE_SIZE)));
  return (
    <div className="space-y-3">
      <Table aria-label="Outputs" aria-busy={outputs.isFetching}>
        <THead>
          <TR>
            <TH>Case</TH>
            <TH>Model</TH>
            <TH>Status</TH>
            <TH className="w-1/2">Output</TH>
            <TH className="text-right">Latency</TH>
            <TH className="text-right">Tokens in / out</TH>
          </TR>
        </THead>
        <TBody>
          {items.map((o) => (
            <TR key={o.id}>
              <TD className="tabular-nums">#{o.case_id}</TD>
              <TD>{o.model_name}</TD>
              <TD>
                <Badge tone={outputTone[o.status] ?? 'neutral'}>{o.status}</Badge>
              </TD>
              <TD>
                {o.error ? (
                  <p className="whitespace-pre-wrap break-words text-red-700">{o.error}</p>
                ) : o.text ? (
                  <p className="line-clamp-4 whitespace-pre-wrap break-words" title={o.text}>
                    {o.text}
                  </p>
                ) : (
                  <span className="text-zinc-400">—</span>
                )}
              </TD>
              <TD className="text-right tabular-nums">{o.latency_ms != null ? `${o.latency_ms} ms` : '—'}</TD>
              <TD className="text-right tabular-nums">
                {o.tokens_in ?? '—'} / {o.tokens_out ?? '—'}
              </TD>
            </TR>
          ))}
        </TBody>
      </Table>
      <Pager
        label="Outputs pagination"
        page={page}
        pageCount={pageCount}
        onPage={setPage}
        summary={`${total} ${total === 1 ? 'output' : 'outputs'} · page ${page} of ${pageCount}`}
      />
    </div>
  );
}
