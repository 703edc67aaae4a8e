import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { EmptyState, ErrorState, LoadingRows, Pager, buttonClasses } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { relativeTime } from '@/lib/format';
import { cn, focusRing } from '@/lib/cn';
import { useExperimentList } from '../hooks/useExperiments';
import { StatusBadge } from '../components/StatusBadge';
import { ImportBundle } from '../components/ImportBundle';

/** The project's experiments: drafts to resume, running loops, finished reports. */
export function ExperimentsPage() {
  const projectId = Number(useParams().projectId);
  const [page, setPage] = useState(1);
  const list = useExperimentList(projectId, page);
  const newLink = (
    <Link to={`/projects/${projectId}/experiments/new`} className={buttonClasses('primary')}>
      + New experiment
    </Link>
  );
  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h2 className="text-lg font-semibold">Experiments</h2>
          <p className="text-sm text-zinc-600">Refine a prompt in iterations: each is run, judged and improved, and a person approves every change.</p>
        </div>
        <div className="flex flex-wrap items-start gap-2">
          <ImportBundle projectId={projectId} />
          {newLink}
        </div>
      </div>
      {list.isPending && <LoadingRows label="Loading experiments" rows={3} />}
      {list.isError && <ErrorState title="Could not load experiments" error={list.error} onRetry={() => list.refetch()} retrying={list.isFetching} />}
      {list.data && list.data.items.length === 0 && (
        <EmptyState
          title="No experiments yet"
          description="Start from a template (customer support, creative writing, data extraction, code generation) or your own objective."
          action={newLink}
        />
      )}
      {list.data && list.data.items.length > 0 && (
        <ul className="space-y-2" aria-label="Experiments">
          {list.data.items.map((e) => (
            <li key={e.id}>
              <Link
                to={`/projects/${projectId}/experiments/${e.id}${e.status === 'draft' ? '/edit' : ''}`}
                className={cn('block rounded-xl border border-zinc-200 bg-white p-3 hover:border-indigo-300', focusRing)}
              >
                <div className="flex flex-wrap items-center justify-between gap-2">
                  <span className="min-w-0 break-words font-medium text-zinc-900">{e.name || 'Untitled draft'}</span>
                  <StatusBadge status={e.status} />
                </div>
                <p className="mt-1 text-sm text-zinc-600">
                  {e.status === 'draft' ? 'Draft: resume the wizard' : `${e.iterations ?? 0} iteration${e.iterations === 1 ? '' : 's'}`}
                  {' · '}spent {formatMicros(e.spent_micros ?? 0)}
                  {e.budget_micros ? ` of ${formatMicros(e.budget_micros)}` : ''}
                  {' · '}updated {relativeTime(e.updated_at)}
                  {e.stop_reason ? ` · stopped: ${e.stop_detail ?? e.stop_reason}` : ''}
                </p>
              </Link>
            </li>
          ))}
        </ul>
      )}
      {list.data && list.data.total > list.data.page_size && <Pager label="Experiments pages" page={page} pageCount={Math.ceil(list.data.total / list.data.page_size)} onPage={setPage} />}
    </div>
  );
}
