import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Link } from 'react-router-dom';
import { observeElementRect, useVirtualizer } from '@tanstack/react-virtual';
import { Badge, EmptyState, ErrorState, LoadingRows } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { cn, focusRing } from '@/lib/cn';
import { outputTone } from '@/features/runs/components/outputTone';
import { casePath, type GridCell, type GridFilters, type GridOutput, type GridRow, type GridScore, type GridTarget } from '../api';
import { useGridPages } from '../hooks/useGrid';
import { scoreOnScale } from '../scale';
import { RetrievedContext } from '@/features/runs/rag/RetrievedContext';
import { useDocumentNames } from '@/features/runs/rag/useDocumentNames';

export const ROW_HEIGHT = 136;
export const HEADER_HEIGHT = 44;
export const CASE_WIDTH = 280;
export const COLUMN_WIDTH = 320;
const DEFAULT_VIEWPORT = { width: 1100, height: 576 };
/** Rows PageUp / PageDown move by. */
const PAGE_ROWS = 10;

export interface ActiveCell {
  row: number;
  col: number; // 0: the case column; 1..n: the targets
}

/**
 * A run's results: one row per case, one column per target. Both axes are virtualised (only
 * the rows and columns in view, plus a few, are in the DOM) and rows are fetched a page at a
 * time as they scroll into view, so 100,000 cells scroll like 100. One cell is in the tab
 * order at a time (roving tabindex): arrows, Home/End, Ctrl+Home/End and PageUp/PageDown
 * move between cells, Enter opens the output (or the case, from the first column).
 */
export function ResultsGrid({
  projectId,
  runId,
  filters,
  onExpand,
  onScoreKey,
  describeScores,
  active,
  onActiveChange,
  initialRect,
}: {
  projectId: number;
  runId: number;
  filters: GridFilters;
  onExpand: (output: GridOutput) => void;
  /** A scoring key pressed on a target's cell; true when it was used. */
  onScoreKey?: (key: string, row: GridRow, cell: GridCell) => boolean;
  /** The scoring line of a cell (the reviewer's own score), when scoring is on. */
  describeScores?: (output: GridOutput) => string | null;
  active: ActiveCell;
  onActiveChange: (cell: ActiveCell) => void;
  /** The viewport's size before it is measured (tests, first paint). */
  initialRect?: { width: number; height: number };
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const gridRef = useRef<HTMLDivElement>(null);
  const pendingFocus = useRef(false);
  const viewport = initialRect ?? DEFAULT_VIEWPORT;
  const [visible, setVisible] = useState<[number, number]>([0, 0]);
  const { first, total, rowAt } = useGridPages(projectId, runId, filters, visible);
  const targets: GridTarget[] = first.data?.targets ?? [];
  const [scrollWidth, setScrollWidth] = useState(viewport.width);
  // Columns share the width there is (never narrower than COLUMN_WIDTH): no blank band at the right.
  const columnWidth = targets.length ? Math.max(COLUMN_WIDTH, Math.floor((scrollWidth - CASE_WIDTH) / targets.length)) : COLUMN_WIDTH;

  const observe = <T extends Element>(instance: Parameters<typeof observeElementRect<T>>[0], cb: (r: { width: number; height: number }) => void) =>
    observeElementRect(instance, (rect) => {
      const r = rect.height > 0 ? rect : viewport;
      setScrollWidth((w) => (Math.abs(w - r.width) < 1 ? w : r.width));
      cb(r);
    });
  const rows = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 4,
    useFlushSync: false,
    paddingStart: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    initialRect: viewport,
    observeElementRect: observe,
    onChange: (instance) => {
      const items = instance.getVirtualItems();
      const range: [number, number] = items.length ? [items[0].index, items[items.length - 1].index] : [0, 0];
      setVisible((v) => (v[0] === range[0] && v[1] === range[1] ? v : range));
    },
  });
  const cols = useVirtualizer({
    horizontal: true,
    count: targets.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => columnWidth,
    overscan: 1,
    useFlushSync: false,
    paddingStart: CASE_WIDTH,
    scrollPaddingStart: CASE_WIDTH,
    initialRect: viewport,
    observeElementRect: observe,
  });

  useEffect(() => cols.measure(), [cols, columnWidth]);

  // Focus follows the active cell once it is rendered (it may first need to scroll in).
  useLayoutEffect(() => {
    if (!pendingFocus.current) return;
    const el = gridRef.current?.querySelector<HTMLElement>(`[data-cell="${active.row}:${active.col}"]`);
    if (el) {
      pendingFocus.current = false;
      el.focus({ preventScroll: true });
    }
  });

  if (first.isPending) return <LoadingRows label="Loading results" rows={5} />;
  if (first.isError) return <ErrorState title="Could not load the results" error={first.error} onRetry={() => first.refetch()} retrying={first.isFetching} />;
  if (total === 0) {
    return <EmptyState title="No matching cases" description="No case of this run matches these filters; loosen or clear them." />;
  }

  const rowItems = rows.getVirtualItems();
  const colItems = cols.getVirtualItems();
  const lastCol = targets.length;
  const row = Math.min(active.row, total - 1);
  const col = Math.min(active.col, lastCol);
  const totalWidth = cols.getTotalSize();
  const leading = colItems.length ? colItems[0].start - CASE_WIDTH : 0;
  const trailing = colItems.length ? totalWidth - colItems[colItems.length - 1].end : 0;

  const moveTo = (next: ActiveCell) => {
    const r = Math.max(0, Math.min(total - 1, next.row));
    const c = Math.max(0, Math.min(lastCol, next.col));
    pendingFocus.current = true;
    onActiveChange({ row: r, col: c });
    rows.scrollToIndex(r, { align: 'auto' });
    if (c > 0) cols.scrollToIndex(c - 1, { align: 'auto' });
    else if (scrollRef.current) scrollRef.current.scrollLeft = 0;
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (!(e.target as HTMLElement).dataset?.cell) return; // keys typed in a control inside a cell
    const ctrl = e.ctrlKey || e.metaKey;
    const moves: Record<string, ActiveCell | undefined> = {
      ArrowUp: { row: row - 1, col },
      ArrowDown: { row: row + 1, col },
      ArrowLeft: { row, col: col - 1 },
      ArrowRight: { row, col: col + 1 },
      Home: ctrl ? { row: 0, col: 0 } : { row, col: 0 },
      End: ctrl ? { row: total - 1, col: lastCol } : { row, col: lastCol },
      PageUp: { row: row - PAGE_ROWS, col },
      PageDown: { row: row + PAGE_ROWS, col },
    };
    const next = moves[e.key];
    if (next) {
      e.preventDefault();
      moveTo(next);
      return;
    }
    const current = rowAt(row);
    if (!current) return;
    if (e.key === 'Enter') {
      if (col === 0) {
        (e.currentTarget.querySelector<HTMLAnchorElement>(`[data-cell="${row}:0"] a`) ?? undefined)?.click();
      } else {
        const output = current.cells[col - 1]?.outputs[0];
        if (output) onExpand(output);
      }
      e.preventDefault();
      return;
    }
    if (col > 0 && !ctrl && !e.altKey && onScoreKey && onScoreKey(e.key, current, current.cells[col - 1])) e.preventDefault();
  };

  return (
    <div
      ref={gridRef}
      role="grid"
      aria-label="Results: cases by target"
      aria-rowcount={total + 1}
      aria-colcount={lastCol + 1}
      onKeyDown={onKeyDown}
      className="rounded-xl border border-zinc-200 bg-white text-sm"
    >
      <div ref={scrollRef} data-testid="grid-scroll" className="relative h-[36rem] overflow-auto rounded-xl">
        <div style={{ height: rows.getTotalSize(), width: totalWidth, position: 'relative' }}>
          <div
            role="row"
            aria-rowindex={1}
            className="sticky top-0 z-20 flex border-b border-zinc-200 bg-zinc-50 font-medium text-zinc-700"
            style={{ height: HEADER_HEIGHT, width: totalWidth }}
          >
            <div role="columnheader" aria-colindex={1} className="sticky left-0 z-10 flex items-center border-r border-zinc-200 bg-zinc-50 px-3" style={{ width: CASE_WIDTH, flex: 'none' }}>
              Case
            </div>
            <div style={{ width: leading, flex: 'none' }} />
            {colItems.map((c) => {
              const t = targets[c.index];
              return (
                <div key={c.key} role="columnheader" aria-colindex={c.index + 2} className="flex items-center truncate border-r border-zinc-200 px-3" style={{ width: columnWidth, flex: 'none' }} title={t.label}>
                  {t.label || `Target ${t.target_id}`}
                </div>
              );
            })}
            <div style={{ width: trailing, flex: 'none' }} />
          </div>
          {rowItems.map((v) => {
            const data = rowAt(v.index);
            return (
              <div
                key={v.key}
                role="row"
                aria-rowindex={v.index + 2}
                className="absolute left-0 flex border-b border-zinc-100"
                style={{ height: ROW_HEIGHT, width: totalWidth, transform: `translateY(${v.start}px)`, top: 0 }}
              >
                <CaseCell projectId={projectId} runId={runId} index={v.index} row={data} active={row === v.index && col === 0} onFocus={() => onActiveChange({ row: v.index, col: 0 })} />
                <div style={{ width: leading, flex: 'none' }} />
                {colItems.map((c) => (
                  <TargetCell
                    key={c.key}
                    rowIndex={v.index}
                    colIndex={c.index + 1}
                    cell={data?.cells[c.index]}
                    label={targets[c.index].label}
                    width={columnWidth}
                    turns={data?.turns ?? 1}
                    active={row === v.index && col === c.index + 1}
                    onFocus={() => onActiveChange({ row: v.index, col: c.index + 1 })}
                    onExpand={onExpand}
                    mine={describeScores}
                  />
                ))}
                <div style={{ width: trailing, flex: 'none' }} />
              </div>
            );
          })}
        </div>
      </div>
      <ActiveDetails projectId={projectId} row={rowAt(row)} col={col} targets={targets} />
    </div>
  );
}

function CaseCell({ projectId, runId, index, row, active, onFocus }: { projectId: number; runId: number; index: number; row: GridRow | undefined; active: boolean; onFocus: () => void }) {
  return (
    <div
      role="rowheader"
      aria-colindex={1}
      data-cell={`${index}:0`}
      tabIndex={active ? 0 : -1}
      onFocus={onFocus}
      className={cn('sticky left-0 z-10 flex flex-col gap-1 overflow-hidden border-r border-zinc-200 bg-white p-3', focusRing, 'focus-visible:ring-inset focus-visible:ring-offset-0')}
      style={{ width: CASE_WIDTH, flex: 'none' }}
    >
      {row ? (
        <>
          <span className="flex items-center gap-2 text-xs text-zinc-600">
            <span className="tabular-nums">#{row.number}</span>
            {row.turns > 1 && <span data-testid="case-turns">{row.turns} turns, from turn 1</span>}
            {/* No focus on press: focusing would make this row active, and the details below the
                grid would change height under the pointer before the click lands. */}
            <Link tabIndex={-1} to={casePath(projectId, runId, row.case_id)} onMouseDown={(e) => e.preventDefault()} className="rounded text-indigo-700 underline-offset-2 hover:underline">
              Side by side
            </Link>
          </span>
          <span className="line-clamp-3 text-zinc-900" title={row.input}>
            {row.input || '—'}
          </span>
          {row.tags.length > 0 && (
            <span className="flex gap-1 overflow-hidden">
              {row.tags.slice(0, 3).map((t) => (
                <Badge key={t} tone="neutral" className="truncate">
                  {t}
                </Badge>
              ))}
              {row.tags.length > 3 && <span className="text-xs text-zinc-600">+{row.tags.length - 3}</span>}
            </span>
          )}
        </>
      ) : (
        <span className="text-zinc-500">Loading…</span>
      )}
    </div>
  );
}

function metrics(o: GridOutput): string {
  const parts: string[] = [];
  if (o.latency_ms != null) parts.push(`${o.latency_ms} ms`);
  if (o.tokens_in != null || o.tokens_out != null) parts.push(`${(o.tokens_in ?? 0) + (o.tokens_out ?? 0)} tok`);
  if (o.cost_micros != null) parts.push(formatMicros(o.cost_micros));
  if (o.cached) parts.push('cached');
  return parts.join(' · ');
}

function scoreLabel(s: GridScore): string {
  const verdict = s.passed === true ? ' ✓' : s.passed === false ? ' ✗' : '';
  if (s.error) return `${s.scorer_name}: error`;
  return `${s.scorer_name} ${scoreOnScale(s)}${verdict}`;
}

const scoreTone = (s: GridScore) => (s.error ? 'danger' : s.passed === true ? 'success' : s.passed === false ? 'danger' : 'neutral');

function TargetCell({
  rowIndex,
  colIndex,
  cell,
  label,
  width,
  turns,
  active,
  onFocus,
  onExpand,
  mine,
}: {
  rowIndex: number;
  colIndex: number;
  cell: GridCell | undefined;
  label: string;
  width: number;
  /** The case's user turns: a cell of a conversation names the turn its reply answers. */
  turns: number;
  active: boolean;
  onFocus: () => void;
  onExpand: (o: GridOutput) => void;
  mine?: (o: GridOutput) => string | null;
}) {
  const o = cell?.outputs[0];
  const more = (cell?.outputs.length ?? 0) - 1;
  const own = o && mine ? mine(o) : null;
  return (
    <div
      role="gridcell"
      aria-colindex={colIndex + 1}
      aria-label={o ? undefined : `${label}: no output`}
      data-cell={`${rowIndex}:${colIndex}`}
      tabIndex={active ? 0 : -1}
      onFocus={onFocus}
      onDoubleClick={() => o && onExpand(o)}
      aria-describedby={active ? 'grid-active-details' : undefined}
      className={cn(
        'flex flex-col gap-1 overflow-hidden border-r border-zinc-100 p-3',
        active && 'bg-indigo-50/60',
        focusRing,
        'focus-visible:ring-inset focus-visible:ring-offset-0',
      )}
      style={{ width, flex: 'none' }}
    >
      {!cell ? (
        <span className="text-zinc-500">Loading…</span>
      ) : !o ? (
        <span className="text-zinc-500">No output</span>
      ) : (
        <>
          <span className="flex items-center gap-2 text-xs text-zinc-600">
            {o.status !== 'succeeded' && <Badge tone={outputTone[o.status] ?? 'neutral'}>{o.status}</Badge>}
            {o.error_class && <Badge tone="danger">{o.error_class}</Badge>}
            <span className="truncate">{metrics(o)}</span>
            {o.retrieved && (
              <button
                type="button"
                tabIndex={-1}
                onClick={() => onExpand(o)}
                title="The chunks this answer was given (below the grid for the focused cell)"
                data-testid="cell-context"
                className={cn('shrink-0 rounded px-1 text-indigo-700 hover:bg-indigo-100', focusRing)}
              >
                Context ({o.retrieved.length})
              </button>
            )}
            <button
              type="button"
              tabIndex={-1}
              onClick={() => onExpand(o)}
              aria-label={`Open the output of ${label}`}
              className={cn('ml-auto rounded px-1 text-indigo-700 hover:bg-indigo-100', focusRing)}
            >
              Open
            </button>
          </span>
          {turns > 1 && (
            <span className="truncate text-xs text-zinc-600" data-testid="cell-turn" title={o.prompt ?? undefined}>
              Turn {o.turn + 1} of {turns}
              {o.prompt ? `: ${o.prompt}` : ''}
            </span>
          )}
          {/* What is left of the row's height above one line of badges, cut at a whole line. */}
          <span className={cn('whitespace-pre-wrap break-words text-zinc-900', turns > 1 ? 'line-clamp-2' : 'line-clamp-3')}>{o.text ?? o.error ?? ''}</span>
          <span className="mt-auto flex min-w-0 flex-nowrap gap-1 overflow-hidden">
            {o.scores.map((s) => (
              <Badge key={s.id} tone={scoreTone(s)} title={s.rationale || s.comment || s.error || undefined}>
                {scoreLabel(s)}
              </Badge>
            ))}
            {own && <span className="text-xs text-indigo-800">{own}</span>}
            {more > 0 && <span className="text-xs text-zinc-600">+{more} more</span>}
          </span>
        </>
      )}
    </div>
  );
}

/** The focused cell's scores with their rationales: what hovering a score shows, for the keyboard. */
function ActiveDetails({ projectId, row, col, targets }: { projectId: number; row: GridRow | undefined; col: number; targets: GridTarget[] }) {
  const cell = col > 0 ? row?.cells[col - 1] : undefined;
  const o = cell?.outputs[0];
  const documentName = useDocumentNames(projectId, !!o?.retrieved);
  const target = col > 0 ? targets[col - 1] : undefined;
  return (
    <div id="grid-active-details" data-testid="grid-active-details" className="min-h-12 border-t border-zinc-200 px-3 py-2 text-sm text-zinc-700">
      {!row ? null : col === 0 ? (
        <span>
          Case #{row.number}: {row.input}
        </span>
      ) : !o ? (
        <span>{target?.label}: no output</span>
      ) : (
        <div className="space-y-1">
          <p className="font-medium text-zinc-900">
            Case #{row.number} · {target?.label}
            {o.error ? ` · ${o.error_class ?? 'error'}: ${o.error}` : ''}
          </p>
          {o.scores.length === 0 ? (
            <p>No scores yet.</p>
          ) : (
            <ul className="space-y-0.5">
              {o.scores.map((s) => (
                <li key={s.id}>
                  <span className="font-medium">{scoreLabel(s)}</span>
                  {s.rationale && ` — ${s.rationale}`}
                  {s.comment && ` — “${s.comment}”`}
                  {s.error && ` — ${s.error}`}
                </li>
              ))}
            </ul>
          )}
          {o.retrieved && <RetrievedContext chunks={o.retrieved} documentName={documentName} />}
        </div>
      )}
    </div>
  );
}
