import type { InputHTMLAttributes } from 'react';
import { cn, focusRing } from '@/lib/cn';

export function Checkbox({ className, ...rest }: Omit<InputHTMLAttributes<HTMLInputElement>, 'type'>) {
  return (
    <input
      type="checkbox"
      className={cn('size-4 rounded-xl border-zinc-300 accent-indigo-600', focusRing, className)}
      {...rest}
    />
  );
}
