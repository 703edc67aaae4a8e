import { Link, useParams } from 'react-router-dom';
import { buttonClasses, EmptyState, ErrorState, Skeleton } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { useMe } from '@/features/auth/hooks/useAuth';
import { RunsSection } from '@/features/runs/components/RunsSection';
import { roleAtLeast } from '@/api/types';
import { AuditSection } from '../components/AuditSection';
import { MembersSection } from '../components/MembersSection';
import { RoleBadge } from '../components/RoleBadge';
import { useProject } from '../hooks/useProjects';

export function ProjectHomePage() {
  const projectId = Number(useParams().projectId);
  const project = useProject(projectId);
  const me = useMe();

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
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-500">
        <Link to="/projects" className="rounded-xl hover:text-zinc-900">
          Projects
        </Link>{' '}
        / <span className="text-zinc-900">{p.name}</span>
      </nav>
      <header className="space-y-2">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-xl font-semibold">{p.name}</h1>
          <span className="text-sm text-zinc-500">Your role:</span>
          <RoleBadge role={p.role} />
        </div>
        <p className="text-base text-zinc-600">{p.description || 'No description.'}</p>
      </header>
      <RunsSection projectId={p.id} role={p.role} />
      <MembersSection projectId={p.id} role={p.role} meId={me.data?.id} />
      {roleAtLeast(p.role, 'admin') && <AuditSection projectId={p.id} />}
    </div>
  );
}
