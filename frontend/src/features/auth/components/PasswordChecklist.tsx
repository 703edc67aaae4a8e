import { checkPassword, strengthLabel, type Strength } from '@/lib/password';
import { cn } from '@/lib/cn';

const bars: Record<Strength, { filled: number; color: string; text: string }> = {
  empty: { filled: 0, color: 'bg-zinc-200', text: 'text-zinc-500' },
  weak: { filled: 1, color: 'bg-red-500', text: 'text-red-700' },
  fair: { filled: 2, color: 'bg-amber-500', text: 'text-amber-700' },
  good: { filled: 3, color: 'bg-indigo-500', text: 'text-indigo-700' },
  strong: { filled: 4, color: 'bg-emerald-600', text: 'text-emerald-700' },
};

/** Live password rules with check marks and a weak/fair/good/strong meter. */
export function PasswordChecklist({ password, id }: { password: string; id?: string }) {
  const result = checkPassword(password);
  const bar = bars[result.strength];
  return (
    <div id={id} className="space-y-2">
      <div className="flex items-center gap-3">
        <div className="grid flex-1 grid-cols-4 gap-1" aria-hidden="true">
          {[0, 1, 2, 3].map((i) => (
            <span key={i} className={cn('h-1.5 rounded-xl', i < bar.filled ? bar.color : 'bg-zinc-200')} />
          ))}
        </div>
        <p className={cn('w-28 text-right text-sm font-medium', bar.text)} aria-live="polite" data-testid="password-strength">
          {result.strength === 'empty' ? 'Strength' : `Strength: ${strengthLabel[result.strength]}`}
        </p>
      </div>
      <ul aria-label="Password requirements" className="space-y-1">
        {result.rules.map((rule) => (
          <li
            key={rule.id}
            className={cn('flex items-center gap-2 text-sm', rule.passed ? 'text-emerald-700' : 'text-zinc-500')}
          >
            <span aria-hidden="true" className="inline-block w-4 text-center">
              {rule.passed ? '✓' : '○'}
            </span>
            <span>{rule.label}</span>
            <span className="sr-only">{rule.passed ? '(met)' : '(not met)'}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
