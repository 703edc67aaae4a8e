import type { ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { buttonClasses, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { ReportsNav } from './ReportsNav';

/** The heading and report links every report page shares. */
export function ReportsShell({ projectId, title, intro, controls, children }: { projectId: number; title: string; intro: ReactNode; controls?: ReactNode; children: ReactNode }) {
  return (
    <div className="space-y-4">
      <ReportsNav projectId={projectId} />
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="space-y-1">
          <h2 className="text-lg font-semibold text-zinc-900">{title}</h2>
          <p className="text-sm text-zinc-600">{intro}</p>
        </div>
        {controls && <div className="flex flex-wrap items-center gap-3">{controls}</div>}
      </div>
      {children}
    </div>
  );
}

export function Loading({ label }: { label: string }) {
  return (
    <div role="status" aria-label={label} className="space-y-3">
      <Skeleton className="h-8 w-64" />
      <Skeleton className="h-64 w-full" />
    </div>
  );
}

export function LoadError({ what, error, retry, retrying }: { what: string; error: unknown; retry: () => void; retrying: boolean }) {
  return <ErrorState title={`Could not load ${what}`} error={error} onRetry={retry} retrying={retrying} />;
}

/** Nothing to report yet: say why and what to do next. */
export function NoRunsYet({ projectId, title, description }: { projectId: number; title: string; description: ReactNode }) {
  return (
    <EmptyState
      title={title}
      description={description}
      action={
        <Link to={`/projects/${projectId}/runs/new`} className={buttonClasses('primary')}>
          Start a run
        </Link>
      }
    />
  );
}
