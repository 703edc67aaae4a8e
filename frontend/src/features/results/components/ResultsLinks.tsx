import { Link } from 'react-router-dom';
import { buttonClasses } from '@/components/ui';
import { resultsPath, reviewPath } from '../api';

/** The run page's way into the results grid and the review mode. */
export function ResultsLinks({ projectId, runId }: { projectId: number; runId: number }) {
  return (
    <nav aria-label="Results" className="flex flex-wrap gap-2">
      <Link to={resultsPath(projectId, runId)} className={buttonClasses('secondary', 'sm')}>
        Results grid
      </Link>
      <Link to={reviewPath(projectId, runId)} className={buttonClasses('secondary', 'sm')}>
        Review and score by hand
      </Link>
    </nav>
  );
}
