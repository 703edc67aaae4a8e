import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { Button, Card, CardContent, Table, TBody, TD, TH, THead, TR } from '@/components/ui';

export interface Column<R> {
  key: string;
  header: string;
  cell: (row: R) => ReactNode;
  numeric?: boolean;
}

/** A plain table of a chart's data: the accessible alternative every chart offers. */
export function DataTable<R>({ caption, columns, rows, rowKey }: { caption: string; columns: Column<R>[]; rows: R[]; rowKey: (row: R, i: number) => string | number }) {
  return (
    <Table>
      <caption className="sr-only">{caption}</caption>
      <THead>
        <TR>
          {columns.map((c) => (
            <TH key={c.key} className={c.numeric ? 'text-right' : undefined}>
              {c.header}
            </TH>
          ))}
        </TR>
      </THead>
      <TBody>
        {rows.map((r, i) => (
          <TR key={rowKey(r, i)}>
            {columns.map((c, j) =>
              j === 0 ? (
                <th key={c.key} scope="row" className="whitespace-nowrap px-3 py-2 text-left font-medium text-zinc-900">
                  {c.cell(r)}
                </th>
              ) : (
                // nowrap: a mean and its interval read as one figure, never broken over lines
                <TD key={c.key} className={c.numeric ? 'whitespace-nowrap text-right tabular-nums' : undefined}>
                  {c.cell(r)}
                </TD>
              ),
            )}
          </TR>
        ))}
      </TBody>
    </Table>
  );
}

/** The width of a box, followed as it resizes (a fixed fallback where nothing measures). */
function useWidth(fallback = 640) {
  const ref = useRef<HTMLElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(([entry]) => {
      const w = Math.floor(entry?.contentRect.width ?? 0);
      if (w > 0) setWidth(w);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return { ref, width };
}

/**
 * A titled, described chart with a visible "Show as table" toggle: the table holds the
 * same numbers (intervals included) for screen readers, keyboard users and anyone who
 * would rather read than look.
 */
export function Figure<R>({
  title,
  description,
  chart,
  height = 280,
  table,
  actions,
}: {
  title: string;
  description: ReactNode;
  chart: (width: number, height: number) => ReactNode;
  height?: number;
  table: { columns: Column<R>[]; rows: R[]; rowKey: (row: R, i: number) => string | number };
  actions?: ReactNode;
}) {
  const [asTable, setAsTable] = useState(false);
  const titleId = useId();
  const descId = useId();
  const { ref, width } = useWidth();
  return (
    // min-w-0: in a grid a card may not grow to its chart's first (unmeasured) width
    <Card className="min-w-0">
      <section aria-labelledby={titleId}>
        <CardContent className="space-y-3">
          <div className="flex flex-wrap items-start justify-between gap-3">
            <div className="space-y-1">
              <h3 id={titleId} className="text-base font-semibold text-zinc-900">
                {title}
              </h3>
              <p id={descId} className="text-sm text-zinc-600">
                {description}
              </p>
            </div>
            <div className="flex items-center gap-2">
              {actions}
              <Button variant="secondary" size="sm" aria-pressed={asTable} onClick={() => setAsTable((v) => !v)}>
                {asTable ? 'Show as chart' : 'Show as table'}
              </Button>
            </div>
          </div>
          {asTable ? (
            <DataTable caption={title} {...table} />
          ) : (
            <figure ref={ref} aria-labelledby={titleId} aria-describedby={descId} className="w-full overflow-hidden">
              {chart(width, height)}
            </figure>
          )}
        </CardContent>
      </section>
    </Card>
  );
}
