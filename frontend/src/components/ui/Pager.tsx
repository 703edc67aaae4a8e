import type { ReactNode } from 'react';
import { Button } from './Button';

interface PagerProps {
  /** Accessible name of the navigation landmark, e.g. "Runs pagination". */
  label: string;
  page: number;
  pageCount: number;
  onPage: (page: number) => void;
  /** What the pager says about where you are; defaults to "Page N of M". */
  summary?: ReactNode;
}

/** Previous / Next over a paginated list: one look and one behaviour everywhere. */
export function Pager({ label, page, pageCount, onPage, summary }: PagerProps) {
  return (
    <nav aria-label={label} className="flex items-center justify-between gap-4">
      <span className="text-sm text-zinc-600">{summary ?? `Page ${page} of ${pageCount}`}</span>
      <div className="flex gap-2">
        <Button variant="secondary" size="sm" disabled={page <= 1} onClick={() => onPage(page - 1)}>
          Previous
        </Button>
        <Button variant="secondary" size="sm" disabled={page >= pageCount} onClick={() => onPage(page + 1)}>
          Next
        </Button>
      </div>
    </nav>
  );
}
