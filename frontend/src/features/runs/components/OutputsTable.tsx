import { useState } from 'react';
import { Pager, Badge, Button, EmptyState, ErrorState, Label, LoadingRows, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import type { CellStatus } from '../api';
import { OutputDialog } from './OutputDialog';
import { outputTone } from './outputTone';
import { OUTPUTS_PAGE_SIZE, useOutputs, type OutputFilters } from '../hooks/useRuns';

const CELL_STATUSES: CellStatus[] = ['succeeded', 'failed', 'skipped', 'running', 'pending'];

/** The run's outputs, filtered by target, status and error class, a page at a time. */
export function OutputsTable({
  projectId,
  runId,
  targets,
  errorClasses,
}: {
  projectId: number;
  runId: number;
  targets: Array<{ id: number; label: string }>;
  errorClasses: string[];
}) {
  const [page, setPage] = useState(1);
  const [openId, setOpenId] = useState<number | null>(null);
  const [filters, setFilters] = useState<Required<OutputFilters>>({ target_id: '', status: '', error_class: '' });
  const outputs = useOutputs(projectId, runId, page, filters);
  const setFilter = (patch: Partial<OutputFilters>) => {
    setFilters((f) => ({ ...f, ...patch }));
    setPage(1);
  };
  const filtered = filters.target_id !== '' || filters.status !== '' || filters.error_class !== '';
  const labelOf = new Map(targets.map((t) => [t.id, t.label]));

  let body;
  if (outputs.isPending) body = <LoadingRows label="Loading outputs" rows={4} />;
  else if (outputs.isError) {
    body = <ErrorState title="Could not load outputs" error={outputs.error} onRetry={() => outputs.refetch()} retrying={outputs.isFetching} />;
  } else if (outputs.data.items.length === 0) {
    body = filtered ? (
      <EmptyState title="No outputs match these filters" />
    ) : (
      <EmptyState title="No outputs yet" description="Outputs appear here as the models answer." />
    );
  } else {
    const { items, total } = outputs.data;
    const pageCount = Math.max(1, Math.ceil(total / (outputs.data.page_size || OUTPUTS_PAGE_SIZE)));
    body = (
      <div className="space-y-3">
        <Table aria-label="Outputs" aria-busy={outputs.isFetching}>
          <THead>
            <TR>
              <TH>Case</TH>
              <TH>Target</TH>
              <TH>Status</TH>
              <TH className="w-1/2">Output</TH>
              <TH className="text-right">Latency</TH>
              <TH className="text-right">Tokens in / out</TH>
              <TH className="text-right">Cost</TH>
              <TH>
                <span className="sr-only">Details</span>
              </TH>
            </TR>
          </THead>
          <TBody>
            {items.map((o) => (
              <TR key={o.id}>
                <TD className="tabular-nums">
                  #{o.case_number ?? o.case_id}
                  {o.repeat > 0 && <span className="text-zinc-500"> · r{o.repeat + 1}</span>}
                  {o.turn > 0 && <span className="text-zinc-500"> · turn {o.turn + 1}</span>}
                </TD>
                <TD>{o.label || labelOf.get(o.target_id) || `#${o.target_id}`}</TD>
                <TD>
                  <Badge tone={outputTone[o.status] ?? 'neutral'}>{o.status}</Badge>
                  {o.cached && <span className="ml-1 text-sm text-zinc-500">cached</span>}
                </TD>
                <TD>
                  {o.error || o.error_class ? (
                    <p className="whitespace-pre-wrap break-words text-red-700">
                      {o.error_class && <span className="font-medium">{o.error_class}: </span>}
                      {o.error}
                    </p>
                  ) : o.text ? (
                    <p className="line-clamp-4 whitespace-pre-wrap break-words" title={o.text}>
                      {o.text}
                    </p>
                  ) : (
                    <span className="text-zinc-500">—</span>
                  )}
                </TD>
                <TD className="text-right tabular-nums">{o.latency_ms != null ? `${o.latency_ms} ms` : '—'}</TD>
                <TD className="text-right tabular-nums">
                  {o.tokens_in ?? '—'} / {o.tokens_out ?? '—'}
                </TD>
                <TD className="text-right tabular-nums">{o.cost_micros != null ? formatMicros(o.cost_micros) : '—'}</TD>
                <TD>
                  <Button variant="ghost" size="sm" aria-label={`Details of case #${o.case_number ?? o.case_id}, ${o.label}${o.repeat > 0 ? `, repeat ${o.repeat + 1}` : ''}`} onClick={() => setOpenId(o.id)}>
                    View
                  </Button>
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
          summary={<span data-testid="outputs-total">{`${total} ${total === 1 ? 'output' : 'outputs'} · page ${page} of ${pageCount}`}</span>}
        />
      </div>
    );
  }

  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-3" role="group" aria-label="Output filters">
        <div className="flex items-center gap-2">
          <Label htmlFor="outputs-target">Target</Label>
          <Select id="outputs-target" controlSize="sm" value={filters.target_id} onChange={(e) => setFilter({ target_id: e.target.value ? Number(e.target.value) : '' })}>
            <option value="">All</option>
            {targets.map((t) => (
              <option key={t.id} value={t.id}>
                {t.label}
              </option>
            ))}
          </Select>
        </div>
        <div className="flex items-center gap-2">
          <Label htmlFor="outputs-status">Status</Label>
          <Select id="outputs-status" controlSize="sm" value={filters.status} onChange={(e) => setFilter({ status: e.target.value })}>
            <option value="">All</option>
            {CELL_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </Select>
        </div>
        <div className="flex items-center gap-2">
          <Label htmlFor="outputs-error-class">Error class</Label>
          <Select id="outputs-error-class" controlSize="sm" value={filters.error_class} onChange={(e) => setFilter({ error_class: e.target.value })}>
            <option value="">All</option>
            {errorClasses.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </Select>
        </div>
      </div>
      {body}
      <OutputDialog projectId={projectId} runId={runId} outputId={openId} onClose={() => setOpenId(null)} />
    </div>
  );
}
