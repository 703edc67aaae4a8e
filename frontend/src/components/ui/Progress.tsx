import { cn } from '@/lib/cn';

/** A determinate progress bar; value is 0-100. */
export function Progress({
  value,
  label,
  tone = 'indigo',
  className,
}: {
  value: number;
  label: string;
  tone?: 'indigo' | 'success' | 'danger' | 'warning';
  className?: string;
}) {
  const v = Math.max(0, Math.min(100, Math.round(value)));
  const fill = tone === 'success' ? 'bg-emerald-600' : tone === 'danger' ? 'bg-red-600' : tone === 'warning' ? 'bg-amber-500' : 'bg-indigo-600';
  return (
    <div
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={v}
      aria-valuetext={`${v}%`}
      className={cn('h-3 w-full overflow-hidden rounded-xl bg-zinc-100', className)}
    >
      <div className={cn('h-full rounded-xl transition-[width] duration-300', fill)} style={{ width: `${v}%` }} />
    </div>
  );
}
