import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

export function EmptyState({
  title,
  description,
  action,
  className,
}: {
  title: string;
  description?: ReactNode;
  action?: ReactNode;
  className?: string;
}) {
  return (
    <div className={cn('rounded-xl border border-dashed border-zinc-300 bg-white p-6 text-center', className)}>
      <p className="text-base font-semibold text-zinc-900">{title}</p>
      {description && <p className="mt-2 text-sm text-zinc-600">{description}</p>}
      {action && <div className="mt-4 flex justify-center">{action}</div>}
    </div>
  );
}
