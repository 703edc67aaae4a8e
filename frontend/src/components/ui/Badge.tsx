import type { HTMLAttributes } from 'react';
import { cn } from '@/lib/cn';

export type BadgeTone = 'neutral' | 'indigo' | 'success' | 'danger' | 'warning';

const tones: Record<BadgeTone, string> = {
  neutral: 'border-zinc-200 bg-zinc-50 text-zinc-700',
  indigo: 'border-indigo-200 bg-indigo-50 text-indigo-700',
  success: 'border-emerald-200 bg-emerald-50 text-emerald-800',
  danger: 'border-red-200 bg-red-50 text-red-800',
  warning: 'border-amber-200 bg-amber-50 text-amber-800',
};

export function Badge({ tone = 'neutral', className, ...rest }: HTMLAttributes<HTMLSpanElement> & { tone?: BadgeTone }) {
  return (
    <span
      className={cn('inline-flex items-center rounded-xl border px-2 py-0.5 text-sm font-medium', tones[tone], className)}
      {...rest}
    />
  );
}
