import { Link } from 'react-router-dom';
import { buttonClasses, EmptyState } from '@/components/ui';

export function NotFoundPage() {
  return (
    <div className="mx-auto max-w-md p-6 pt-24">
      <EmptyState
        title="Page not found"
        description="The page you asked for does not exist."
        action={
          <Link to="/projects" className={buttonClasses('secondary')}>
            Go to projects
          </Link>
        }
      />
    </div>
  );
}
