import { useRef } from 'react';
import { useQueries } from '@tanstack/react-query';
import { observeElementRect, useVirtualizer } from '@tanstack/react-virtual';
import { Badge, Button, EmptyState, ErrorState, LoadingRows, Skeleton } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { caseSummary, expectedSummary, type Case } from '../api';
import { CASES_PAGE_SIZE, casesQuery, type CaseFilters } from '../hooks/useDatasets';

export const ROW_HEIGHT = 44;
const DEFAULT_VIEWPORT = { width: 960, height: 528 };
// Below `sm` (390 px phones) only #, input and actions: six columns left the input none.
const GRID =
  'grid grid-cols-[2rem_minmax(0,1fr)_9rem] sm:grid-cols-[4rem_minmax(0,3fr)_minmax(0,2fr)_minmax(0,1.5fr)_6rem_9rem] items-center gap-3 px-3';
const WIDE = 'hidden sm:block';

/**
 * The cases of one dataset version, virtualised: only the rows in view (plus a few) are
 * in the DOM, and only the pages of CASES_PAGE_SIZE cases those rows fall on are fetched,
 * so scrolling anywhere in 10,000 cases stays smooth.
 */
export function CasesTable({
  projectId,
  datasetId,
  filters,
  canEdit,
  onEdit,
  onDelete,
  initialRect,
}: {
  projectId: number;
  datasetId: number;
  filters: CaseFilters;
  canEdit: boolean;
  onEdit: (c: Case) => void;
  onDelete: (c: Case) => void;
  /** The viewport's size before it is measured (tests, first paint). */
  initialRect?: { width: number; height: number };
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const viewport = initialRect ?? DEFAULT_VIEWPORT;
  const first = useQueries({ queries: [casesQuery(projectId, datasetId, filters, 1)] })[0];
  const total = first.data?.total ?? 0;

  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    initialRect: viewport,
    // An element not laid out (hidden, or jsdom) measures 0×0: assume the default viewport.
    observeElementRect: (instance, cb) => observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : viewport)),
  });
  const items = virtualizer.getVirtualItems();
  const firstPage = items.length ? Math.floor(items[0].index / CASES_PAGE_SIZE) + 1 : 1;
  const lastPage = items.length ? Math.floor(items[items.length - 1].index / CASES_PAGE_SIZE) + 1 : 1;
  const pageNumbers: number[] = [];
  for (let p = firstPage; p <= lastPage; p++) pageNumbers.push(p);
  const pages = useQueries({ queries: pageNumbers.map((p) => casesQuery(projectId, datasetId, filters, p)) });
  const rowAt = (index: number): Case | undefined => {
    const p = Math.floor(index / CASES_PAGE_SIZE) + 1;
    const data = p === 1 ? first.data : pages[p - firstPage]?.data;
    return data?.items[index - (p - 1) * CASES_PAGE_SIZE];
  };

  if (first.isPending) return <LoadingRows label="Loading cases" rows={5} />;
  if (first.isError) return <ErrorState title="Could not load cases" error={first.error} onRetry={() => first.refetch()} retrying={first.isFetching} />;
  if (total === 0) {
    const filtered = !!(filters.q.trim() || filters.tag.trim() || filters.difficulty);
    return filtered ? (
      <EmptyState title="No matching cases" description="Try another search, tag or difficulty." />
    ) : (
      <EmptyState title="No cases yet" description="Add a case, import a CSV or JSONL file, or generate cases with a model." />
    );
  }

  return (
    <div className="rounded-xl border border-zinc-200 bg-white text-sm">
      <div role="table" aria-label="Cases" aria-rowcount={total + 1}>
        <div role="rowgroup">
          <div role="row" aria-rowindex={1} className={cn(GRID, 'h-10 rounded-t-xl border-b border-zinc-200 bg-zinc-50 font-medium text-zinc-600')}>
            <span role="columnheader">#</span>
            <span role="columnheader">Input</span>
            <span role="columnheader" className={WIDE}>Expected</span>
            <span role="columnheader" className={WIDE}>Tags</span>
            <span role="columnheader" className={WIDE}>Difficulty</span>
            <span role="columnheader">
              <span className="sr-only">Actions</span>
            </span>
          </div>
        </div>
        <div ref={scrollRef} role="rowgroup" data-testid="cases-scroll" aria-label="Cases, scroll to see more" className={cn("relative h-[33rem] overflow-auto", focusRing)} tabIndex={0}>
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {items.map((v) => {
              const c = rowAt(v.index);
              return (
                <div
                  key={v.key}
                  role="row"
                  aria-rowindex={v.index + 2}
                  className={cn(GRID, 'absolute left-0 w-full border-b border-zinc-100')}
                  style={{ height: ROW_HEIGHT, transform: `translateY(${v.start}px)` }}
                >
                  {c ? (
                    <>
                      <span role="cell" className="tabular-nums text-zinc-500">
                        {v.index + 1}
                      </span>
                      <span role="cell" className="truncate" title={caseSummary(c)}>
                        {caseSummary(c)}
                      </span>
                      <span role="cell" className={cn(WIDE, 'truncate text-zinc-600')} title={expectedSummary(c.expected)}>
                        {expectedSummary(c.expected)}
                      </span>
                      <span role="cell" className="hidden gap-1 overflow-hidden sm:flex">
                        {c.tags.slice(0, 3).map((t) => (
                          <Badge key={t} tone="neutral" className="truncate">
                            {t}
                          </Badge>
                        ))}
                        {c.tags.length > 3 && <span className="text-zinc-500">+{c.tags.length - 3}</span>}
                      </span>
                      <span role="cell" className={WIDE}>{c.difficulty ?? '—'}</span>
                      <span role="cell" className="flex justify-end gap-1">
                        {canEdit && (
                          <>
                            <Button variant="ghost" size="sm" aria-label={`Edit case ${v.index + 1}`} onClick={() => onEdit(c)}>
                              Edit
                            </Button>
                            <Button variant="ghost" size="sm" className="text-red-700" aria-label={`Delete case ${v.index + 1}`} onClick={() => onDelete(c)}>
                              Delete
                            </Button>
                          </>
                        )}
                      </span>
                    </>
                  ) : (
                    <span role="cell" className="col-span-full">
                      <Skeleton className="h-5 w-full" />
                      <span className="sr-only">Loading case {v.index + 1}</span>
                    </span>
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      <p className="rounded-b-xl border-t border-zinc-200 px-3 py-2 text-zinc-600" aria-live="polite">
        {total.toLocaleString('en-US')} case{total === 1 ? '' : 's'}
      </p>
    </div>
  );
}
