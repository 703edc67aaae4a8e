import { cn } from '@/lib/cn';
import { errorMessage } from '@/api/errors';
import { Button } from './Button';

/** Shows the server's message and a retry button. */
export function ErrorState({
  title = 'Something went wrong',
  error,
  onRetry,
  retrying,
  className,
}: {
  title?: string;
  error: unknown;
  onRetry?: () => void;
  retrying?: boolean;
  className?: string;
}) {
  return (
    <div role="alert" className={cn('rounded-xl border border-red-200 bg-red-50 p-4', className)}>
      <p className="text-base font-semibold text-red-900">{title}</p>
      <p className="mt-1 text-sm text-red-800">{errorMessage(error)}</p>
      {onRetry && (
        <Button variant="secondary" size="sm" className="mt-3" onClick={onRetry} loading={retrying}>
          Try again
        </Button>
      )}
    </div>
  );
}
