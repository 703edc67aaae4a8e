import type { ReactNode } from 'react';
import { cn } from '@/lib/cn';

export function Alert({
  tone = 'danger',
  children,
  className,
}: {
  tone?: 'danger' | 'success' | 'info';
  children: ReactNode;
  className?: string;
}) {
  const tones = {
    danger: 'border-red-200 bg-red-50 text-red-800',
    success: 'border-emerald-200 bg-emerald-50 text-emerald-800',
    info: 'border-indigo-200 bg-indigo-50 text-indigo-800',
  };
  return (
    <div
      role={tone === 'danger' ? 'alert' : 'status'}
      className={cn('rounded-xl border px-3 py-2 text-sm', tones[tone], className)}
    >
      {children}
    </div>
  );
}
