import type { InputHTMLAttributes, Ref, TextareaHTMLAttributes } from 'react';
import { cn, focusRing } from '@/lib/cn';

const base =
  'w-full rounded-xl border bg-white px-3 text-sm text-zinc-900 placeholder:text-zinc-500 disabled:cursor-not-allowed disabled:bg-zinc-50';

export interface InputProps extends InputHTMLAttributes<HTMLInputElement> {
  invalid?: boolean;
  ref?: Ref<HTMLInputElement>;
}

export function Input({ className, invalid, ...rest }: InputProps) {
  return (
    <input
      className={cn(base, 'h-10', focusRing, invalid ? 'border-red-400' : 'border-zinc-200', className)}
      aria-invalid={invalid || undefined}
      {...rest}
    />
  );
}

export interface TextareaProps extends TextareaHTMLAttributes<HTMLTextAreaElement> {
  invalid?: boolean;
}

export function Textarea({ className, invalid, ...rest }: TextareaProps) {
  return (
    <textarea
      className={cn(base, 'min-h-24 py-2', focusRing, invalid ? 'border-red-400' : 'border-zinc-200', className)}
      aria-invalid={invalid || undefined}
      {...rest}
    />
  );
}
