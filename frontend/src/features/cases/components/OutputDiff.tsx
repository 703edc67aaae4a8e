import { useId, useMemo, useState } from 'react';
import { diffLines, diffWords, type Change } from 'diff';
import { EmptyState, Select } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import type { LabelledOutput } from '../api';

export type DiffMode = 'words' | 'lines';

/** Counts of added and removed words or lines. */
function tally(changes: Change[], mode: DiffMode) {
  const count = (c: Change) => (mode === 'lines' ? (c.count ?? 1) : c.value.trim().split(/\s+/).filter(Boolean).length);
  return {
    added: changes.filter((c) => c.added).reduce((n, c) => n + count(c), 0),
    removed: changes.filter((c) => c.removed).reduce((n, c) => n + count(c), 0),
  };
}

export function computeDiff(a: string, b: string, mode: DiffMode): Change[] {
  return mode === 'lines' ? diffLines(a, b) : diffWords(a, b);
}

function DiffText({ changes }: { changes: Change[] }) {
  return (
    <pre
      data-testid="diff-text"
      className="max-h-[32rem] overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-white p-3 font-mono text-sm leading-6 text-zinc-900"
    >
      {changes.map((c, i) =>
        c.added ? (
          <ins key={i} className="rounded bg-emerald-100 text-emerald-900 underline decoration-emerald-700">
            <span className="sr-only">[added: </span>
            <span aria-hidden="true" className="select-none font-bold">+</span>
            {c.value}
            <span className="sr-only">]</span>
          </ins>
        ) : c.removed ? (
          <del key={i} className="rounded bg-red-100 text-red-900 line-through decoration-red-700">
            <span className="sr-only">[removed: </span>
            <span aria-hidden="true" className="select-none font-bold">−</span>
            {c.value}
            <span className="sr-only">]</span>
          </del>
        ) : (
          <span key={i}>{c.value}</span>
        ),
      )}
    </pre>
  );
}

/**
 * A text diff between any two outputs of the case: pick the "from" and "to" outputs and
 * the granularity (words or lines). Removed text is struck through on red, added text
 * underlined on green, each with a +/− sign and an "added"/"removed" text for screen
 * readers, so the colour is never the only cue.
 */
export function OutputDiff({ outputs }: { outputs: LabelledOutput[] }) {
  const comparable = useMemo(() => outputs.filter((o) => o.output.text != null), [outputs]);
  const [fromKey, setFromKey] = useState<string | null>(null);
  const [toKey, setToKey] = useState<string | null>(null);
  const [mode, setMode] = useState<DiffMode>('words');
  const id = useId();

  const from = comparable.find((o) => o.key === fromKey) ?? comparable[0];
  const to = comparable.find((o) => o.key === toKey) ?? comparable.find((o) => o !== from) ?? comparable[1];
  const changes = useMemo(
    () => (from && to ? computeDiff(from.output.text ?? '', to.output.text ?? '', mode) : []),
    [from, to, mode],
  );

  if (comparable.length < 2) {
    return (
      <EmptyState
        title="Nothing to compare yet"
        description="A diff needs two outputs with text; this case has fewer (pending or failed cells have none)."
      />
    );
  }
  const counts = tally(changes, mode);
  const same = from === to;
  const unit = mode === 'lines' ? 'line' : 'word';
  const n = (count: number) => `${count} ${unit}${count === 1 ? '' : 's'}`;
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap items-end gap-3">
        <div className="space-y-1">
          <label htmlFor={`${id}-from`} className="block text-sm font-medium text-zinc-900">
            From
          </label>
          <Select id={`${id}-from`} value={from?.key} onChange={(e) => setFromKey(e.target.value)}>
            {comparable.map((o) => (
              <option key={o.key} value={o.key}>
                {o.label}
              </option>
            ))}
          </Select>
        </div>
        <div className="space-y-1">
          <label htmlFor={`${id}-to`} className="block text-sm font-medium text-zinc-900">
            To
          </label>
          <Select id={`${id}-to`} value={to?.key} onChange={(e) => setToKey(e.target.value)}>
            {comparable.map((o) => (
              <option key={o.key} value={o.key}>
                {o.label}
              </option>
            ))}
          </Select>
        </div>
        <fieldset className="flex items-center gap-1 rounded-xl border border-zinc-200 p-1">
          <legend className="sr-only">Diff by</legend>
          {(['words', 'lines'] as const).map((m) => (
            <label
              key={m}
              className={cn(
                'cursor-pointer rounded-lg px-3 py-1 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-500',
                mode === m ? 'bg-indigo-50 font-medium text-indigo-800' : 'text-zinc-700 hover:bg-zinc-100',
              )}
            >
              <input type="radio" name={`${id}-mode`} value={m} checked={mode === m} onChange={() => setMode(m)} className={cn('sr-only', focusRing)} />
              By {m}
            </label>
          ))}
        </fieldset>
      </div>
      <p className="text-sm text-zinc-700" aria-live="polite">
        {same
          ? 'The same output is chosen twice: pick another to compare.'
          : counts.added === 0 && counts.removed === 0
            ? 'The two outputs are identical.'
            : `${n(counts.removed)} removed, ${n(counts.added)} added from “${from?.label}” to “${to?.label}”.`}
      </p>
      <DiffText changes={changes} />
    </div>
  );
}
