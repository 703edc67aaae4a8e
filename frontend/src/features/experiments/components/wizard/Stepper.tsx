import { cn, focusRing } from '@/lib/cn';
import { STEPS } from '../../lib/validation';

/** The seven steps; a step already reached can be revisited, later ones cannot be skipped to. */
export function Stepper({ current, reached, invalid, onGo }: { current: number; reached: number; invalid: Set<number>; onGo: (i: number) => void }) {
  return (
    <nav aria-label="Wizard steps">
      <ol className="flex flex-wrap gap-1">
        {STEPS.map((s, i) => (
          <li key={s.key}>
            <button
              type="button"
              disabled={i > reached}
              onClick={() => onGo(i)}
              aria-current={i === current ? 'step' : undefined}
              className={cn(
                'rounded-xl px-2 py-1 text-sm disabled:cursor-not-allowed disabled:opacity-50',
                i === current ? 'bg-indigo-600 text-white' : invalid.has(i) ? 'bg-red-50 text-red-800' : 'bg-zinc-100 text-zinc-700 hover:bg-zinc-200',
                focusRing,
              )}
            >
              {i + 1}. {s.title}
              {invalid.has(i) && <span className="sr-only"> (has errors)</span>}
            </button>
          </li>
        ))}
      </ol>
    </nav>
  );
}
