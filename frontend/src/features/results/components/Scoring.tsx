import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import type { StaleSave } from '../hooks/useSerialSave';
import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { Button, Dialog, Select } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import type { ScoringChoice } from '../hooks/useGrid';

const SCALES: Record<string, string> = { '1-5': 'rating 1–5', pass_fail: 'pass / fail', criteria: 'per criterion' };

export const scaleLabel = (scale: string) => SCALES[scale] ?? scale;

/** The keys that score, as shown in the "?" help. */
export const SHORTCUTS: Array<[string, string]> = [
  ['.', 'Approve: pass (on a 1–5 scale: keeps the rating, else 5, and marks it passed)'],
  [',', 'Reject: fail (on a 1–5 scale: keeps the rating, else 1, and marks it failed)'],
  ['1 – 5', 'Rate 1 to 5 (1–5 scales)'],
  ['Ctrl+Z / ⌘Z', 'Undo the last score (restores the value before, or removes it)'],
  ['?', 'Show these shortcuts'],
];

/**
 * Which manual scorer the keys score with, the Undo button and the "?" help. With no
 * manual scorer in the project it says so and how to add one.
 */
export function ScoringBar({
  choices,
  versionId,
  onChoose,
  canScore,
  loading = false,
  canUndo,
  onUndo,
  busy,
  error,
  saved,
  stale = null,
  onReload,
  navigation,
  helpOpen,
  onHelp,
  criteriaByKeys = false,
}: {
  choices: ScoringChoice[];
  versionId: number | null;
  onChoose: (versionId: number | null) => void;
  canScore: boolean;
  loading?: boolean;
  canUndo: boolean;
  onUndo: () => void;
  busy: boolean;
  error: string | null;
  saved: string | null;
  /** A save refused because the score changed in another tab: reload or keep this one. */
  stale?: StaleSave | null;
  onReload?: () => void;
  navigation: Array<[string, string]>;
  helpOpen: boolean;
  onHelp: (open: boolean) => void;
  /** The page scores per criterion from the keys (review mode). */
  criteriaByKeys?: boolean;
}) {
  const chosen = choices.find((c) => c.versionId === versionId) ?? null;
  return (
    <section aria-label="Scoring by hand" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-3 text-sm">
      <div className="flex flex-wrap items-center gap-3">
        {!canScore ? (
          <p className="text-zinc-700">Scoring by hand needs the reviewer role in this project; you can look at the results.</p>
        ) : loading ? (
          <p className="text-zinc-700">Loading the manual scorers…</p>
        ) : choices.length === 0 ? (
          <NoManualScorer />
        ) : (
          <label className="flex items-center gap-2 font-medium text-zinc-700">
            Score with
            <Select controlSize="sm" value={versionId ?? ''} onChange={(e) => onChoose(e.target.value ? Number(e.target.value) : null)}>
              <option value="">No scorer (keys do not score)</option>
              {choices.map((c) => (
                <option key={c.versionId} value={c.versionId}>
                  {c.name} ({scaleLabel(c.scale)}){c.pinned ? '' : ' — not pinned by this run'}
                </option>
              ))}
            </Select>
          </label>
        )}
        {canScore && chosen?.scale === 'criteria' && !criteriaByKeys && (
          <p className="text-amber-800">This scorer rates each criterion separately, which the keys here do not do yet: they score pass/fail and 1–5 scorers only.</p>
        )}
        <Button type="button" variant="secondary" size="sm" onClick={onUndo} disabled={!canUndo} aria-keyshortcuts="Control+Z Meta+Z">
          Undo
        </Button>
        <button
          type="button"
          onClick={() => onHelp(true)}
          aria-label="Keyboard shortcuts"
          aria-keyshortcuts="?"
          className={cn('size-8 rounded-xl border border-zinc-200 font-semibold text-zinc-700 hover:bg-zinc-50', focusRing)}
        >
          ?
        </button>
        <span role="status" aria-live="polite" className={cn('text-sm', error ? 'text-red-700' : 'text-emerald-800')}>
          {busy ? 'Saving…' : (error ?? saved ?? '')}
        </span>
      </div>
      {stale && (
        <StaleWriteNotice
          error={stale.error}
          edit={stale.label.replace(/^(Saved|Undone): /, (m) => (m.startsWith('Saved') ? 'Score: ' : 'Undo: '))}
          onReload={() => onReload?.()}
          onKeepMine={() => void stale.keepMine()}
          keeping={busy}
        />
      )}
      <ShortcutsHelp open={helpOpen} onClose={() => onHelp(false)} navigation={navigation} />
    </section>
  );
}

/** Where a manual scorer is made: the Scorers tab's form (people, not the API, read this). */
export function NoManualScorer() {
  const { projectId } = useParams();
  return (
    <div className="space-y-1 text-zinc-700" data-testid="no-manual-scorer">
      <p className="font-medium text-zinc-900">This project has no manual scorer, so there is nothing to score by hand with yet.</p>
      <p>
        A project editor adds one under Scorers:{' '}
        <Link to={`/projects/${projectId}/scorers/new`} className={cn('rounded font-medium text-indigo-700 underline', focusRing)}>
          New scorer
        </Link>
        , kind <code>manual</code>, with a pass / fail, 1–5 or per-criterion scale. Any manual scorer of the project can score this run's outputs, even one the run did not pin; pin it when creating a run to ask reviewers for it.
      </p>
    </div>
  );
}

export function ShortcutsHelp({ open, onClose, navigation }: { open: boolean; onClose: () => void; navigation: Array<[string, string]> }) {
  return (
    <Dialog open={open} onClose={onClose} title="Keyboard shortcuts">
      <dl className="grid grid-cols-[8rem_1fr] gap-x-4 gap-y-2 text-sm">
        {[...navigation, ...SHORTCUTS].map(([key, what]) => (
          <div key={key} className="contents">
            <dt>
              <kbd className="rounded border border-zinc-300 bg-zinc-50 px-1.5 py-0.5 font-mono">{key}</kbd>
            </dt>
            <dd className="text-zinc-700">{what}</dd>
          </div>
        ))}
      </dl>
      <p className="mt-3 text-sm text-zinc-600">Scores are saved as soon as you press a key.</p>
    </Dialog>
  );
}

/** Ctrl/Cmd+Z and "?" anywhere on the page, except while typing in a field. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);
}

export function useHelp() {
  return useState(false);
}
