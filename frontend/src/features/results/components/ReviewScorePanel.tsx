import { Button } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import type { ManualScoreBody } from '../api';
import { describeEntry, entryForKey, type ScoringChoice } from '../hooks/useGrid';
import type { Before } from '../hooks/useReviewScoring';

/** What the reviewer gave this cell, in words ("rating 4, pass"; per criterion; "differs between repeats"). */
export function describeBefore(b: Before | null, choice: ScoringChoice): string {
  if (!b) return 'none yet';
  if (choice.scale === 'criteria') return choice.criteria.map((c) => `${c} ${b.criteria[c] ?? '—'}`).join(', ');
  return describeEntry({ rating: b.rating, passed: b.passed });
}

/**
 * The buttons of review mode's scoring (each names its key): pass / fail and 1–5, or one
 * row of 1–5 per criterion with the criterion the keys rate marked. `repeats` > 1 says
 * that a key scores every repeat of the cell.
 */
export function ReviewScorePanel({
  choice,
  mine,
  mixed,
  repeats,
  criterion,
  draft,
  onCriterion,
  onRate,
  onSaveCriteria,
  onScore,
}: {
  choice: ScoringChoice;
  mine: Before | null;
  mixed: boolean;
  repeats: number;
  criterion: number;
  draft: Record<string, number>;
  onCriterion: (index: number) => void;
  onRate: (criterion: string, rating: number) => void;
  onSaveCriteria: () => void;
  onScore: (entry: ManualScoreBody | null) => void;
}) {
  const current = mine ? { rating: mine.rating, passed: mine.passed } : null;
  const complete = choice.criteria.every((c) => (draft[c] ?? mine?.criteria[c]) !== undefined);
  return (
    <div className="space-y-2">
      <p className="text-sm text-zinc-700" data-testid="my-score">
        Your score ({choice.name}): {mixed ? 'differs between the repeats' : describeBefore(mine, choice)}
      </p>
      {repeats > 1 && (
        <p className="rounded-xl border border-indigo-200 bg-indigo-50 p-2 text-sm text-indigo-900" data-testid="repeats-note">
          This cell has {repeats} repeats: a key scores all {repeats} of them at once.
        </p>
      )}
      {choice.scale === 'criteria' ? (
        <div className="space-y-2" role="group" aria-label="Score each criterion">
          <p className="text-sm text-zinc-600">↑ ↓ choose a criterion, 1–5 rate it (then the next); the score is saved when the last one is rated, or with Enter.</p>
          <ul className="space-y-1">
            {choice.criteria.map((c, i) => {
              const value = draft[c] ?? mine?.criteria[c];
              return (
                <li key={c} aria-current={i === criterion ? 'true' : undefined} data-testid={`criterion-${c}`} className={cn('flex flex-wrap items-center gap-2 rounded-xl border p-2', i === criterion ? 'border-indigo-400 bg-indigo-50' : 'border-zinc-200')}>
                  <button type="button" onClick={() => onCriterion(i)} className={cn('min-w-28 rounded-xl text-left font-medium text-zinc-900', focusRing)}>
                    {c}
                  </button>
                  <span className="w-16 text-sm text-zinc-700" data-testid={`criterion-${c}-value`}>
                    {value !== undefined ? `${value}/5` : '—'}
                    {draft[c] !== undefined && draft[c] !== mine?.criteria[c] ? ' *' : ''}
                  </span>
                  <span className="flex gap-1">
                    {[1, 2, 3, 4, 5].map((n) => (
                      <Button key={n} type="button" size="sm" variant={value === n ? 'primary' : 'secondary'} aria-label={`${c}: ${n}`} onClick={() => onRate(c, n)}>
                        {n}
                      </Button>
                    ))}
                  </span>
                </li>
              );
            })}
          </ul>
          <Button type="button" size="sm" onClick={onSaveCriteria} disabled={!complete} aria-keyshortcuts="Enter">
            Save criteria (Enter)
          </Button>
        </div>
      ) : (
        <div className="flex flex-wrap gap-2" role="group" aria-label="Score this output">
          <Button type="button" size="sm" onClick={() => onScore(entryForKey('.', choice.scale, current))} aria-keyshortcuts=".">
            Pass (.)
          </Button>
          <Button type="button" size="sm" variant="danger" onClick={() => onScore(entryForKey(',', choice.scale, current))} aria-keyshortcuts=",">
            Fail (,)
          </Button>
          {choice.scale === '1-5' &&
            [1, 2, 3, 4, 5].map((n) => (
              <Button key={n} type="button" size="sm" variant="secondary" onClick={() => onScore(entryForKey(String(n), choice.scale, current))} aria-keyshortcuts={String(n)} aria-label={`Rate ${n}`}>
                {n}
              </Button>
            ))}
        </div>
      )}
    </div>
  );
}
