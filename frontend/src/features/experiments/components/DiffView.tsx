import { cn } from '@/lib/cn';
import { diffRows, diffStats } from '../lib/unifiedDiff';

const ROW: Record<string, string> = {
  add: 'bg-emerald-50 text-emerald-900',
  del: 'bg-red-50 text-red-900',
  hunk: 'bg-zinc-100 text-zinc-600',
  ctx: 'text-zinc-800',
  meta: 'text-zinc-600',
};
const SIGN: Record<string, string> = { add: '+', del: '−', ctx: ' ', hunk: '', meta: '' };
const SR: Record<string, string> = { add: 'added: ', del: 'removed: ', ctx: '', hunk: '', meta: '' };

/** A unified diff, highlighted line by line: signs and screen-reader words, never colour alone. */
export function DiffView({ diff, label = 'Proposed changes' }: { diff: string; label?: string }) {
  const rows = diffRows(diff);
  const { added, removed } = diffStats(rows);
  return (
    <figure className="space-y-1" aria-label={label}>
      <figcaption className="text-sm text-zinc-600">
        {added} line{added === 1 ? '' : 's'} added, {removed} removed
      </figcaption>
      <div className="overflow-hidden rounded-xl border border-zinc-200 bg-white font-mono text-sm" data-testid="diff-view">
        {rows.map((r, i) => (
          <div key={i} className={cn('grid grid-cols-[2.5rem_1rem_1fr] gap-1 px-2 leading-6', ROW[r.kind])} data-kind={r.kind}>
            <span className="select-none text-right text-zinc-400" aria-hidden="true">
              {r.newNo ?? r.oldNo ?? ''}
            </span>
            <span className="select-none" aria-hidden="true">
              {SIGN[r.kind]}
            </span>
            <span className="min-w-0 whitespace-pre-wrap break-words">
              {SR[r.kind] && <span className="sr-only">{SR[r.kind]}</span>}
              {r.kind === 'del' ? <del className="no-underline">{r.text}</del> : r.kind === 'add' ? <ins className="no-underline">{r.text}</ins> : r.text || ' '}
            </span>
          </div>
        ))}
      </div>
    </figure>
  );
}
