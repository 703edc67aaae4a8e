import { EmptyState, ErrorState, LoadingRows } from '@/components/ui';
import type { Bucket } from '../api';
import { useCoverage } from '../hooks/useDatasets';

const GROUPS = [
  { key: 'by_tag', title: 'By tag' },
  { key: 'by_length', title: 'By length' },
  { key: 'by_difficulty', title: 'By difficulty' },
  { key: 'by_language', title: 'By language' },
] as const;

/** One horizontal bar chart; the numbers are in the text, the bars only show them. */
export function BarChart({ title, buckets, total: cases }: { title: string; buckets: Bucket[]; total?: number }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  // A case can have several tags: "of N cases" counts cases, not the bars' sum.
  const total = cases ?? buckets.reduce((s, b) => s + b.count, 0);
  return (
    <figure className="space-y-2">
      <figcaption className="text-sm font-medium text-zinc-900">{title}</figcaption>
      {buckets.length === 0 ? (
        <p className="text-sm text-zinc-500">No data.</p>
      ) : (
        <ul aria-label={title} className="space-y-1">
          {buckets.map((b) => (
            <li key={b.key} className="grid grid-cols-[8rem_1fr_4rem] items-center gap-2 text-sm">
              <span className="truncate" title={b.key}>
                {b.key || '(none)'}
              </span>
              <span className="h-3 rounded-xl bg-zinc-100" aria-hidden="true">
                <span className="block h-full rounded-xl bg-indigo-600" style={{ width: `${(b.count / max) * 100}%` }} />
              </span>
              <span className="text-right tabular-nums text-zinc-700">
                {b.count.toLocaleString('en-US')}
                <span className="sr-only"> of {total} cases</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}

/** How the current version's cases spread over tags, lengths, difficulties and languages. */
export function CoverageChart({ projectId, datasetId }: { projectId: number; datasetId: number }) {
  const coverage = useCoverage(projectId, datasetId);
  if (coverage.isPending) return <LoadingRows label="Loading coverage" />;
  if (coverage.isError) return <ErrorState title="Could not load coverage" error={coverage.error} onRetry={() => coverage.refetch()} />;
  const empty = GROUPS.every((g) => (coverage.data[g.key] ?? []).length === 0);
  if (empty) return <EmptyState title="No coverage yet" description="Coverage appears once the dataset has cases." />;
  return (
    <div className="space-y-4">
      <p className="text-sm text-zinc-600">
        {coverage.data.case_count.toLocaleString('en-US')} case{coverage.data.case_count === 1 ? '' : 's'} in version {coverage.data.version}. Lengths are of the input text: XS under 50
        characters, S under 200, M under 1,000, L under 5,000, XL longer.
      </p>
    <div className="grid gap-6 md:grid-cols-2">
      {GROUPS.map((g) => (
        <BarChart key={g.key} title={g.title} buckets={coverage.data[g.key] ?? []} total={coverage.data.case_count} />
      ))}
    </div>
    </div>
  );
}
