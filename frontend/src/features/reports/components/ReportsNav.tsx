import { NavLink } from 'react-router-dom';
import { cn, focusRing } from '@/lib/cn';

const links = [
  { to: '', label: 'Leaderboard', end: true },
  { to: 'costs', label: 'Costs and tokens', end: false },
  { to: 'trend', label: 'Score trend', end: false },
  { to: 'runs', label: 'Run breakdown', end: false },
  { to: 'ratings', label: 'Model ratings', end: false },
  { to: 'judges', label: 'Judge calibration', end: false },
  { to: 'rag', label: 'RAG metrics', end: false },
];

/** The report pages of a project, one link each (each page is its own chunk). */
export function ReportsNav({ projectId }: { projectId: number }) {
  return (
    <nav aria-label="Reports" className="flex flex-wrap gap-2">
      {links.map((l) => (
        <NavLink
          key={l.label}
          to={l.to ? `/projects/${projectId}/reports/${l.to}` : `/projects/${projectId}/reports`}
          end={l.end}
          className={({ isActive }) =>
            cn(
              'inline-flex h-8 items-center rounded-xl border px-3 text-sm',
              isActive ? 'border-indigo-600 bg-indigo-50 font-medium text-indigo-900' : 'border-zinc-200 bg-white text-zinc-700 hover:bg-zinc-100',
              focusRing,
            )
          }
        >
          {l.label}
        </NavLink>
      ))}
    </nav>
  );
}
