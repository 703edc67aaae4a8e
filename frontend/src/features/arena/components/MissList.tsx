import { Badge, type BadgeTone } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { splitMisses } from '../logic';
import type { Miss } from '../types';

const sevTone: Record<string, BadgeTone> = { critical: 'danger', high: 'warning', low: 'neutral' };

function Rows({ title, help, misses, onJump }: { title: string; help: string; misses: Miss[]; onJump: (m: Miss) => void }) {
  return (
    <section aria-label={title} className="space-y-2">
      <h4 className="text-sm font-medium text-zinc-900">
        {title} ({misses.length})
      </h4>
      {misses.length === 0 ? (
        <p className="text-sm text-zinc-500">None.</p>
      ) : (
        <ul className="space-y-2">
          {misses.map((m) => (
            <li key={m.trace_id}>
              <button
                type="button"
                onClick={() => onJump(m)}
                className={cn('flex w-full items-center justify-between gap-2 rounded-xl border border-zinc-200 px-3 py-2 text-left hover:bg-zinc-50', focusRing)}
                title={help}
              >
                <span className="min-w-0">
                  <span className="font-mono text-sm text-zinc-900">{m.trace_id}</span>
                  {m.message_index != null && <span className="text-sm text-zinc-600"> · message {m.message_index}</span>}
                  {m.clause && <span className="block truncate text-sm text-zinc-600">{m.clause}</span>}
                </span>
                {m.severity && <Badge tone={sevTone[m.severity] ?? 'neutral'}>{m.severity}</Badge>}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Where the eval disagrees with the labels; a click opens the trace at the message. */
export function MissList({ misses, onJump }: { misses: Miss[] | null | undefined; onJump: (m: Miss) => void }) {
  const { missed, falseAlarms } = splitMisses(misses);
  return (
    <div className="space-y-3" data-testid="misses">
      <Rows title="Missed failures" help="labelled fail, your eval passed it" misses={missed} onJump={onJump} />
      <Rows title="False alarms" help="labelled pass, your eval failed it" misses={falseAlarms} onJump={onJump} />
    </div>
  );
}
