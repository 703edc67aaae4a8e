import { Link, NavLink, Outlet, useLocation, useOutletContext, useParams } from 'react-router-dom';
import { buttonClasses, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { isApiError } from '@/api/errors';
import type { Project } from '@/api/types';
import { cn, focusRing } from '@/lib/cn';
import { RoleBadge } from '../components/RoleBadge';
import { useProject } from '../hooks/useProjects';

export interface ProjectOutlet {
  project: Project;
}

/** The project a page under /projects/:projectId renders for (loaded by the layout). */
export function useProjectOutlet(): ProjectOutlet {
  return useOutletContext<ProjectOutlet>();
}

const tabs = [
  { to: '', label: 'Runs', end: true },
  { to: 'datasets', label: 'Datasets', end: false },
  { to: 'prompts', label: 'Prompts', end: false },
  { to: 'experiments', label: 'Experiments', end: false },
  { to: 'providers', label: 'Providers', end: false },
  { to: 'models', label: 'Models', end: false },
  { to: 'scorers', label: 'Scorers', end: false },
  { to: 'reports', label: 'Reports', end: false },
  { to: 'members', label: 'Members', end: false },
  { to: 'settings', label: 'Settings', end: false },
];

const tabClass = ({ isActive }: { isActive: boolean }) =>
  cn(
    '-mb-px inline-flex h-10 shrink-0 items-center whitespace-nowrap rounded-t-xl border-b-2 px-3 text-sm',
    isActive ? 'border-indigo-600 font-medium text-zinc-900' : 'border-transparent text-zinc-600 hover:text-zinc-900',
    focusRing,
  );

/** Header, breadcrumb and section tabs shared by every page of a project. */
export function ProjectLayout() {
  const projectId = Number(useParams().projectId);
  const project = useProject(projectId);
  const { pathname } = useLocation();
  // The Runs tab stays current on the run configuration page (/projects/:id/runs/new).
  const inRuns = /^\/projects\/[^/]+\/runs(\/|$)/.test(pathname);

  if (!Number.isFinite(projectId) || (project.isError && isApiError(project.error) && project.error.status === 404)) {
    return (
      <EmptyState
        title="Project not found"
        description="It does not exist, or you are not a member of it."
        action={
          <Link to="/projects" className={buttonClasses('secondary')}>
            Back to projects
          </Link>
        }
      />
    );
  }
  if (project.isPending) {
    return (
      <div role="status" aria-label="Loading project" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-5 w-96" />
        <Skeleton className="h-48 w-full" />
      </div>
    );
  }
  if (project.isError) {
    return <ErrorState title="Could not load the project" error={project.error} onRetry={() => project.refetch()} retrying={project.isFetching} />;
  }

  const p = project.data;
  return (
    <div className="min-w-0 space-y-6">
      <nav aria-label="Breadcrumb" className="break-words text-sm text-zinc-500">
        <Link to="/projects" className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
          Projects
        </Link>{' '}
        / <span className="text-zinc-900">{p.name}</span>
      </nav>
      <header className="space-y-2">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="min-w-0 break-words text-xl font-semibold">{p.name}</h1>
          <span className="text-sm text-zinc-500">Your role:</span>
          <RoleBadge role={p.role} />
        </div>
        <p className="text-base text-zinc-600">{p.description || 'No description.'}</p>
      </header>
      {/* However many tabs: they scroll within this bar (never the page) at narrow widths. */}
      <nav aria-label="Project sections" className="relative flex max-w-full gap-1 overflow-x-auto overscroll-x-contain border-b border-zinc-200">
        {tabs.map((t) => (
          <NavLink
            key={t.label}
            to={t.to ? `/projects/${p.id}/${t.to}` : `/projects/${p.id}`}
            end={t.end}
            className={({ isActive }) => tabClass({ isActive: isActive || (t.label === 'Runs' && inRuns) })}
            aria-current={t.label === 'Runs' && inRuns ? 'page' : undefined}
          >
            {t.label}
          </NavLink>
        ))}
      </nav>
      <Outlet context={{ project: p } satisfies ProjectOutlet} />
    </div>
  );
}
