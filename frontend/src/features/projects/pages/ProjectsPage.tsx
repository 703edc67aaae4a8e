import { useState } from 'react';
import { Pager, Button, EmptyState, ErrorState, Input, Label, Select, Skeleton } from '@/components/ui';
import { ROLES, type Role } from '@/api/types';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { CreateProjectDialog } from '../components/CreateProjectDialog';
import { ProjectCard } from '../components/ProjectCard';
import { roleLabel } from '../components/RoleBadge';
import { PROJECTS_PAGE_SIZE, useProjects } from '../hooks/useProjects';

export const SEARCH_MIN_CHARS = 2;

export function ProjectsPage() {
  const [search, setSearch] = useState('');
  const [role, setRole] = useState<Role | ''>('');
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);

  const debounced = useDebouncedValue(search.trim(), 300);
  const q = debounced.length >= SEARCH_MIN_CHARS ? debounced : undefined;
  const projects = useProjects({ page, q, role: role || undefined });
  const filtered = !!q || !!role;

  const total = projects.data?.total ?? 0;
  const pageCount = Math.max(1, Math.ceil(total / (projects.data?.page_size ?? PROJECTS_PAGE_SIZE)));

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-4">
        <h1 className="text-xl font-semibold">Projects</h1>
        <Button onClick={() => setCreating(true)}>New project</Button>
      </div>

      <div className="flex flex-wrap items-end gap-4" role="search">
        <div className="w-full max-w-sm space-y-2">
          <Label htmlFor="project-search">Search projects</Label>
          <Input
            id="project-search"
            type="search"
            placeholder="Name or description"
            value={search}
            onChange={(e) => {
              setSearch(e.target.value);
              setPage(1);
            }}
            aria-describedby="project-search-hint"
          />
          <p id="project-search-hint" className="text-sm text-zinc-500">
            {search.trim().length > 0 && search.trim().length < SEARCH_MIN_CHARS
              ? `Type at least ${SEARCH_MIN_CHARS} characters to search.`
              : '\u00a0'}
          </p>
        </div>
        <div className="space-y-2">
          <Label htmlFor="project-role">Role</Label>
          <Select
            id="project-role"
            value={role}
            onChange={(e) => {
              setRole(e.target.value as Role | '');
              setPage(1);
            }}
          >
            <option value="">All roles</option>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {roleLabel[r]}
              </option>
            ))}
          </Select>
          <p className="text-sm">{'\u00a0'}</p>
        </div>
      </div>

      {projects.isPending ? (
        <div role="status" aria-label="Loading projects" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {Array.from({ length: 6 }, (_, i) => (
            <Skeleton key={i} className="h-32" />
          ))}
        </div>
      ) : projects.isError ? (
        <ErrorState
          title="Could not load projects"
          error={projects.error}
          onRetry={() => projects.refetch()}
          retrying={projects.isFetching}
        />
      ) : projects.data.items.length === 0 ? (
        filtered ? (
          <EmptyState title="No projects match" description="Try another search or role." />
        ) : (
          <EmptyState
            title="No projects yet"
            description="Create your first project to add models, datasets and runs."
            action={<Button onClick={() => setCreating(true)}>Create your first project</Button>}
          />
        )
      ) : (
        <>
          <ul aria-label="Projects" aria-busy={projects.isFetching} className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {projects.data.items.map((p) => (
              <ProjectCard key={p.id} project={p} />
            ))}
          </ul>
          <Pager
            label="Pagination"
            page={page}
            pageCount={pageCount}
            onPage={setPage}
            summary={`Page ${page} of ${pageCount} · ${total} ${total === 1 ? 'project' : 'projects'}`}
          />
        </>
      )}

      <CreateProjectDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  );
}
