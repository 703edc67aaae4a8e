import { useId, useState } from 'react';
import { Badge, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { criterionLabel, formatRating, type JudgedQuestion, type JudgeSummary, type Rating } from '../api';

/** A button whose text shows on hover and on keyboard focus (and hides on Escape). */
export function Tip({ label, text, children, tone = 'neutral' }: { label: string; text: string; children: string; tone?: 'neutral' | 'danger' }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  return (
    <span className="relative inline-block" onMouseEnter={() => setOpen(true)} onMouseLeave={() => setOpen(false)}>
      <button
        type="button"
        aria-label={label}
        aria-describedby={id}
        aria-expanded={open}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(e) => {
          if (e.key === 'Escape' && open) {
            e.stopPropagation();
            setOpen(false);
          }
        }}
        className={cn('rounded-xl text-sm underline decoration-dotted underline-offset-2', tone === 'danger' ? 'text-red-700' : 'text-indigo-700', focusRing)}
      >
        {children}
      </button>
      <span
        id={id}
        role="tooltip"
        hidden={!open}
        className="absolute left-0 top-full z-20 mt-1 w-72 whitespace-pre-line rounded-xl border border-zinc-200 bg-white p-3 text-sm text-zinc-800 shadow-lg"
      >
        {text}
      </span>
    </span>
  );
}

function RatingCell({ rating, judge, number, criteria }: { rating: Rating; judge: string; number: number; criteria: string[] }) {
  if (rating.status === 'pending') return <span className="text-sm text-zinc-500">Rating…</span>;
  if (rating.status === 'failed') {
    return (
      <div className="space-y-1">
        <Badge tone="danger">Failed</Badge>
        <div>
          <Tip label={`Error of ${judge}, question ${number}`} text={rating.error ?? 'No reason given.'} tone="danger">
            Why
          </Tip>
        </div>
      </div>
    );
  }
  const detail = [
    ...criteria.filter((c) => rating.rationales[c]).map((c) => `${criterionLabel(c)}: ${rating.rationales[c]}`),
    rating.justification,
  ].filter(Boolean);
  return (
    <div className="space-y-1">
      <dl className="grid grid-cols-[auto_auto] gap-x-3 text-sm">
        {criteria.map((c) => (
          <div key={c} className="contents">
            <dt className="text-zinc-600">{criterionLabel(c)}</dt>
            <dd className="tabular-nums" data-testid={`rating-${c}`}>
              {formatRating(rating.scores[c])}
            </dd>
          </div>
        ))}
      </dl>
      {!criteria.includes('overall') && (
        <p className="text-sm">
          Overall <span className="font-medium tabular-nums">{formatRating(rating.overall)}</span>
        </p>
      )}
      <Tip label={`Justification of ${judge}, question ${number}`} text={detail.join('\n\n') || 'No justification given.'}>
        Justification
      </Tip>
    </div>
  );
}

/** One row per question, one column per judge: the ratings side by side. */
export function JudgmentsTable({ items, judges, criteria }: { items: JudgedQuestion[]; judges: JudgeSummary[]; criteria: string[] }) {
  return (
    <Table aria-label="Judgments">
      <THead>
        <TR>
          <TH className="w-12">#</TH>
          <TH className="min-w-64">Question</TH>
          {judges.map((j) => (
            <TH key={j.ref} className="min-w-48">
              {j.name}
            </TH>
          ))}
        </TR>
      </THead>
      <TBody>
        {items.map((q) => (
          <TR key={q.output_id}>
            <TD className="tabular-nums text-zinc-500">{q.number}</TD>
            <TD className="max-w-md whitespace-pre-line">{q.question || <span className="text-zinc-500">(no question text)</span>}</TD>
            {q.ratings.map((r, i) => (
              <TD key={r.judge}>
                <RatingCell rating={r} judge={judges[i]?.name ?? r.judge} number={q.number} criteria={criteria} />
              </TD>
            ))}
          </TR>
        ))}
      </TBody>
    </Table>
  );
}
