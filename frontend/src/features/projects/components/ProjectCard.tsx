import { Link } from 'react-router-dom';
import type { Project } from '@/api/types';
import { absoluteTime, relativeTime } from '@/lib/format';
import { focusRing } from '@/lib/cn';
import { RoleBadge } from './RoleBadge';

export function ProjectCard({ project }: { project: Project }) {
  return (
    <li className="relative flex flex-col gap-3 rounded-xl border border-zinc-200 bg-white p-4 hover:border-indigo-300">
      <div className="flex items-start justify-between gap-3">
        <h2 className="text-base font-semibold text-zinc-900">
          <Link
            to={`/projects/${project.id}`}
            className={`rounded-xl after:absolute after:inset-0 after:rounded-xl hover:text-indigo-700 ${focusRing}`}
          >
            {project.name}
          </Link>
        </h2>
        <RoleBadge role={project.role} />
      </div>
      <p className="line-clamp-2 text-sm text-zinc-600">{project.description || 'No description'}</p>
      <p className="mt-auto flex flex-wrap gap-x-3 text-sm text-zinc-500">
        <span>
          {project.member_count} {project.member_count === 1 ? 'member' : 'members'}
        </span>
        <span aria-hidden="true">·</span>
        <span>
          Updated <time dateTime={project.updated_at} title={absoluteTime(project.updated_at)}>{relativeTime(project.updated_at)}</time>
        </span>
      </p>
    </li>
  );
}
