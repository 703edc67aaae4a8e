import { useEffect, useState } from 'react';
import { Badge, Button, EmptyState, ErrorState, Label, LoadingRows, Select } from '@/components/ui';
import { absoluteTime, relativeTime } from '@/lib/format';
import { caseSummary, expectedSummary, type Case } from '../api';
import { useDiff, useVersions } from '../hooks/useDatasets';

function CaseLine({ c }: { c: Case }) {
  return (
    <span>
      {caseSummary(c)} <span className="text-zinc-500">→ {expectedSummary(c.expected)}</span>
      {c.tags.length > 0 && <span className="text-zinc-500"> [{c.tags.join(', ')}]</span>}
    </span>
  );
}

/** The version history, and what changed between two versions. */
export function VersionsPanel({
  projectId,
  datasetId,
  current,
  onView,
}: {
  projectId: number;
  datasetId: number;
  current: number;
  onView?: (version: number) => void;
}) {
  const versions = useVersions(projectId, datasetId);
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);

  useEffect(() => {
    const list = versions.data;
    if (!list || list.length < 2 || from !== null) return;
    const numbers = list.map((v) => v.number).sort((a, b) => b - a);
    setTo(numbers[0]);
    setFrom(numbers[1]);
  }, [versions.data, from]);

  const diff = useDiff(projectId, datasetId, from, to);

  if (versions.isPending) return <LoadingRows label="Loading versions" />;
  if (versions.isError) return <ErrorState title="Could not load versions" error={versions.error} onRetry={() => versions.refetch()} />;
  const list = [...versions.data].sort((a, b) => b.number - a.number);
  if (list.length === 0) return <EmptyState title="No versions yet" description="Adding, editing, deleting or importing cases creates a version." />;

  return (
    <div className="space-y-4">
      <ol aria-label="Versions" className="divide-y divide-zinc-200 rounded-xl border border-zinc-200">
        {list.map((v) => (
          <li key={v.number} className="flex flex-wrap items-center gap-3 px-3 py-2 text-sm">
            <span className="font-medium">v{v.number}</span>
            {v.number === current && <Badge tone="indigo">Current</Badge>}
            <span className="tabular-nums text-zinc-600">
              {v.case_count.toLocaleString('en-US')} case{v.case_count === 1 ? '' : 's'}
            </span>
            {v.note && <span className="text-zinc-600">{v.note}</span>}
            <span className="ml-auto text-zinc-500" title={absoluteTime(v.created_at)}>
              {v.created_at ? relativeTime(v.created_at) : ''}
            </span>
            {onView && (
              <Button variant="ghost" size="sm" aria-label={`View the cases of v${v.number}`} onClick={() => onView(v.number)}>
                View cases
              </Button>
            )}
          </li>
        ))}
      </ol>
      {list.length > 1 && (
        <section aria-labelledby="diff-heading" className="space-y-3">
          <h3 id="diff-heading" className="text-base font-semibold">
            Compare versions
          </h3>
          <div className="flex flex-wrap items-end gap-3">
            <div className="space-y-1">
              <Label htmlFor="diff-from">From</Label>
              <Select id="diff-from" value={from ?? ''} onChange={(e) => setFrom(Number(e.target.value))}>
                {list.map((v) => (
                  <option key={v.number} value={v.number}>
                    v{v.number}
                  </option>
                ))}
              </Select>
            </div>
            <div className="space-y-1">
              <Label htmlFor="diff-to">To</Label>
              <Select id="diff-to" value={to ?? ''} onChange={(e) => setTo(Number(e.target.value))}>
                {list.map((v) => (
                  <option key={v.number} value={v.number}>
                    v{v.number}
                  </option>
                ))}
              </Select>
            </div>
          </div>
          {from === to ? (
            <p className="text-sm text-zinc-600">Pick two different versions.</p>
          ) : diff.isPending ? (
            <LoadingRows label="Loading the differences" rows={2} />
          ) : diff.isError ? (
            <ErrorState title="Could not compare the versions" error={diff.error} onRetry={() => diff.refetch()} />
          ) : (
            <div className="space-y-3 text-sm" data-testid="diff">
              <p className="text-zinc-700">
                {diff.data.added.length} added, {diff.data.removed.length} removed, {diff.data.changed.length} changed
              </p>
              {diff.data.added.length > 0 && (
                <ul aria-label="Added cases" className="space-y-1">
                  {diff.data.added.map((c) => (
                    <li key={`a${c.id}`} className="rounded-xl border border-emerald-200 bg-emerald-50 px-3 py-1 text-emerald-900">
                      <span className="font-medium">+ </span>
                      <CaseLine c={c} />
                    </li>
                  ))}
                </ul>
              )}
              {diff.data.removed.length > 0 && (
                <ul aria-label="Removed cases" className="space-y-1">
                  {diff.data.removed.map((c) => (
                    <li key={`r${c.id}`} className="rounded-xl border border-red-200 bg-red-50 px-3 py-1 text-red-900">
                      <span className="font-medium">− </span>
                      <CaseLine c={c} />
                    </li>
                  ))}
                </ul>
              )}
              {diff.data.changed.length > 0 && (
                <ul aria-label="Changed cases" className="space-y-1">
                  {diff.data.changed.map(({ before, after }) => (
                    <li key={`c${before.id}-${after.id}`} className="space-y-1 rounded-xl border border-amber-200 bg-amber-50 px-3 py-1 text-amber-900">
                      <div>
                        <span className="font-medium">Before: </span>
                        <CaseLine c={before} />
                      </div>
                      <div>
                        <span className="font-medium">After: </span>
                        <CaseLine c={after} />
                      </div>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
        </section>
      )}
    </div>
  );
}
