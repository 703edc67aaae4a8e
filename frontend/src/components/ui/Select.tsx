import type { Ref, SelectHTMLAttributes } from 'react';
import { cn, focusRing } from '@/lib/cn';

export interface SelectProps extends SelectHTMLAttributes<HTMLSelectElement> {
  controlSize?: 'default' | 'sm';
  ref?: Ref<HTMLSelectElement>;
}

/** A native select, styled: keyboard and screen-reader behaviour come for free. */
export function Select({ className, controlSize = 'default', ...rest }: SelectProps) {
  return (
    <select
      className={cn(
        'rounded-xl border border-zinc-200 bg-white pl-3 pr-8 text-sm text-zinc-900 disabled:cursor-not-allowed disabled:opacity-60',
        controlSize === 'sm' ? 'h-8' : 'h-10',
        focusRing,
        className,
      )}
      {...rest}
    />
  );
}
