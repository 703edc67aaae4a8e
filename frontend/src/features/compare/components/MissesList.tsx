import { Link } from 'react-router-dom';
import { Badge, EmptyState, Label, Pager, Select, type BadgeTone } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { casePath, fixed, inputPreview, OUTCOME_LABELS, OUTCOMES, type DiffCase, type Outcome, type RunDiff } from '../api';

const TONE: Record<Outcome, BadgeTone> = {
  regressed: 'danger',
  new_fail: 'warning',
  still_failing: 'danger',
  fixed: 'success',
  new_pass: 'success',
  still_passing: 'neutral',
  missing: 'neutral',
};

function side(s: DiffCase['base']): string {
  if (!s || s.passed === null) return 'no verdict';
  const verdict = s.passed ? 'pass' : 'fail';
  return s.score === null ? verdict : `${verdict} (${fixed(s.score, 2)})`;
}

/** The cases, what needs attention first (regressed, new fail, still failing…), each linking to the case in the head run. */
export function MissesList({
  projectId,
  headId,
  cases,
  outcome,
  onOutcome,
  onPage,
}: {
  projectId: number;
  headId: number;
  cases: RunDiff['cases'];
  outcome: Outcome | '';
  onOutcome: (o: Outcome | '') => void;
  onPage: (page: number) => void;
}) {
  const pageCount = Math.max(1, Math.ceil(cases.total / cases.page_size));
  return (
    <section aria-labelledby="misses-heading" className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <h2 id="misses-heading" className="text-base font-semibold text-zinc-900">
          Misses and changes
        </h2>
        <div className="flex items-center gap-2">
          <Label htmlFor="misses-outcome">Show</Label>
          <Select id="misses-outcome" controlSize="sm" value={outcome} onChange={(e) => onOutcome(e.target.value as Outcome | '')}>
            <option value="">Every case, what needs attention first</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {OUTCOME_LABELS[o]} only
              </option>
            ))}
          </Select>
        </div>
      </div>
      {cases.items.length === 0 ? (
        <EmptyState title={outcome ? `No ${OUTCOME_LABELS[outcome].toLowerCase()} cases` : 'No cases to compare'} />
      ) : (
        <ul aria-label="Misses list" className="divide-y divide-zinc-200 rounded-xl border border-zinc-200 bg-white">
          {cases.items.map((c) => {
            const target = c.head_label ?? c.base_label ?? 'target';
            return (
              <li key={`${c.case_id}-${c.base_target_id ?? 'n'}-${c.head_target_id ?? 'n'}`} className="flex flex-wrap items-start gap-3 p-3">
                <Badge tone={TONE[c.outcome]} className="shrink-0">
                  {OUTCOME_LABELS[c.outcome]}
                </Badge>
                <div className="min-w-0 flex-1 space-y-1">
                  <Link
                    to={casePath(projectId, headId, c.case_id)}
                    className={cn('rounded-xl font-medium text-indigo-700 hover:text-indigo-800', focusRing)}
                    aria-label={`Open case #${c.case_number ?? c.case_id} (${target}, ${OUTCOME_LABELS[c.outcome].toLowerCase()})`}
                  >
                    Case #{c.case_number ?? c.case_id}
                  </Link>
                  <p className="truncate text-sm text-zinc-700" title={inputPreview(c.input, 2000)}>
                    {inputPreview(c.input)}
                  </p>
                </div>
                <p className="text-sm text-zinc-600">
                  <span className="font-medium text-zinc-900">{target}</span>: {side(c.base)} → {side(c.head)}
                </p>
              </li>
            );
          })}
        </ul>
      )}
      {pageCount > 1 && <Pager label="Misses pagination" page={cases.page} pageCount={pageCount} onPage={onPage} />}
    </section>
  );
}
