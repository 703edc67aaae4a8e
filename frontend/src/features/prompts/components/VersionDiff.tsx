import { useId, useState } from 'react';
import { diffLines, diffWords, type Change } from 'diff';
import { cn, focusRing } from '@/lib/cn';
import { sections, type VersionContent } from '../api';

export type DiffLayout = 'unified' | 'split';

const box = 'overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-white p-3 font-mono text-sm leading-6 text-zinc-900';

// Removed text struck through on red, added underlined on green, each with a sign and a
// screen-reader word, so colour is never the only cue (as in the case page's OutputDiff).
function Part({ c }: { c: Change }) {
  if (c.added)
    return (
      <ins className="rounded bg-emerald-100 text-emerald-900 underline decoration-emerald-700">
        <span className="sr-only">[added: </span>
        {c.value}
        <span className="sr-only">]</span>
      </ins>
    );
  if (c.removed)
    return (
      <del className="rounded bg-red-100 text-red-900 line-through decoration-red-700">
        <span className="sr-only">[removed: </span>
        {c.value}
        <span className="sr-only">]</span>
      </del>
    );
  return <span>{c.value}</span>;
}

function Unified({ changes }: { changes: Change[] }) {
  return (
    <pre className={box} data-testid="diff-unified">
      {changes.map((c, i) => (
        <Part key={i} c={c} />
      ))}
    </pre>
  );
}

/** Two columns (stacked when narrow): the old text with removals, the new with additions. */
function Split({ changes, fromLabel, toLabel }: { changes: Change[]; fromLabel: string; toLabel: string }) {
  return (
    <div className="grid gap-2 md:grid-cols-2" data-testid="diff-split">
      <div className="min-w-0 space-y-1">
        <p className="text-sm text-zinc-600">{fromLabel}</p>
        <pre className={box}>{changes.filter((c) => !c.added).map((c, i) => <Part key={i} c={c} />)}</pre>
      </div>
      <div className="min-w-0 space-y-1">
        <p className="text-sm text-zinc-600">{toLabel}</p>
        <pre className={box}>{changes.filter((c) => !c.removed).map((c, i) => <Part key={i} c={c} />)}</pre>
      </div>
    </div>
  );
}

/**
 * What changed between two versions, section by section (template, system text, few-shots,
 * tools): unchanged sections are named, not repeated. Words for prose, lines for JSON.
 */
export function VersionDiff({ from, to, fromLabel, toLabel }: { from: VersionContent; to: VersionContent; fromLabel: string; toLabel: string }) {
  const [layout, setLayout] = useState<DiffLayout>('unified');
  const id = useId();
  const before = sections(from);
  const after = sections(to);
  const parts = before.map((s, i) => ({
    ...s,
    changes: s.key === 'tools' ? diffLines(s.text, after[i].text) : diffWords(s.text, after[i].text),
    same: s.text === after[i].text,
  }));
  const unchanged = parts.filter((p) => p.same).map((p) => p.label);
  return (
    <div className="space-y-3" data-testid="version-diff">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <p className="text-sm text-zinc-700" aria-live="polite">
          {unchanged.length === parts.length ? `${fromLabel} and ${toLabel} are identical.` : `From ${fromLabel} to ${toLabel}.`}
          {unchanged.length > 0 && unchanged.length < parts.length && ` Unchanged: ${unchanged.join(', ').toLowerCase()}.`}
        </p>
        <fieldset className="flex items-center gap-1 rounded-xl border border-zinc-200 p-1">
          <legend className="sr-only">Diff layout</legend>
          {(['unified', 'split'] as const).map((m) => (
            <label
              key={m}
              className={cn(
                'cursor-pointer rounded-lg px-3 py-1 text-sm has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-500',
                layout === m ? 'bg-indigo-50 font-medium text-indigo-800' : 'text-zinc-700 hover:bg-zinc-100',
              )}
            >
              <input type="radio" name={`${id}-layout`} value={m} checked={layout === m} onChange={() => setLayout(m)} className={cn('sr-only', focusRing)} />
              {m === 'unified' ? 'Unified' : 'Side by side'}
            </label>
          ))}
        </fieldset>
      </div>
      {parts
        .filter((p) => !p.same)
        .map((p) => (
          <section key={p.key} aria-label={`${p.label} changes`} className="space-y-1">
            <h3 className="text-sm font-semibold text-zinc-900">{p.label}</h3>
            {layout === 'unified' ? <Unified changes={p.changes} /> : <Split changes={p.changes} fromLabel={fromLabel} toLabel={toLabel} />}
          </section>
        ))}
    </div>
  );
}
