import { Link } from 'react-router-dom';
import { buttonClasses } from '@/components/ui';
import { comparePath } from '@/features/compare/api';
import { runPath } from '../api';

export const EXPORTS = [
  { format: 'csv', label: 'CSV', description: 'one row per output, a spreadsheet' },
  { format: 'json', label: 'JSON', description: 'every output with its scores, nested' },
  { format: 'junit', label: 'JUnit XML', description: 'one test case per case, for CI' },
] as const;

export const exportUrl = (projectId: number, runId: number, format: (typeof EXPORTS)[number]['format']) =>
  `${runPath(projectId, runId)}/export?format=${format}`;

/**
 * The run's results as a download (GET /runs/{id}/export: the server names the file and
 * streams it; the session cookie authenticates a plain link), and the way to compare it.
 */
export function RunExports({ projectId, runId }: { projectId: number; runId: number }) {
  return (
    <div className="flex flex-wrap items-center gap-2">
      <Link to={comparePath(projectId, runId)} className={buttonClasses('secondary', 'sm')}>
        Compare
      </Link>
      <div role="group" aria-label="Download results" className="flex flex-wrap items-center gap-2">
        <span className="text-sm text-zinc-600" aria-hidden="true">
          Download:
        </span>
        {EXPORTS.map((e) => (
          <a
            key={e.format}
            href={exportUrl(projectId, runId, e.format)}
            download
            className={buttonClasses('secondary', 'sm')}
            aria-label={`Download results as ${e.label}`}
            title={`Download results as ${e.label}: ${e.description}`}
          >
            {e.label}
          </a>
        ))}
      </div>
    </div>
  );
}
