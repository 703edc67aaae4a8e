import { useId } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Select } from '@/components/ui';
import { POINTWISE, type Scorer } from '../api';
import { useScorerCoverage, useScorers } from '../hooks';

/** Judge mode rates questions, not models: a report does not open on it by itself. */
const RATES_MODELS = (s: Scorer) => s.kind !== 'question_quality';

/** Kinds whose score weighs several criteria into one: a report's composite. */
const COMPOSITE = new Set(['llm_judge', 'rag_metrics']);

/**
 * The scorer a report ranks by, kept in the address (?scorer=) so a report can be shared.
 * Without a choice: of the pointwise scorers with scores, a composite that discriminates,
 * else any that discriminates (its case means differ), else the most scored (`unscored`
 * when none has: the report reads success only and says why); "none" reads success only.
 */
export function useScorerChoice(projectId: number) {
  const scorers = useScorers(projectId);
  const coverage = useScorerCoverage(projectId);
  const [params, setParams] = useSearchParams();
  const raw = params.get('scorer');
  const options = (scorers.data?.items ?? []).filter(POINTWISE);
  const counts = new Map((coverage.data?.items ?? []).map((c) => [c.scorer_id, c.values + c.verdicts]));
  const apart = new Set((coverage.data?.items ?? []).filter((c) => c.discriminates).map((c) => c.scorer_id));
  // The most-scored first (a few manual ratings should not hide a judge that scored every output).
  const scored = options.filter((s) => (counts.get(s.id) ?? 0) > 0 && RATES_MODELS(s)).sort((a, b) => counts.get(b.id)! - counts.get(a.id)!);
  const opening =
    scored.find((s) => COMPOSITE.has(s.kind) && apart.has(s.id)) ?? scored.find((s) => apart.has(s.id)) ?? scored.find((s) => COMPOSITE.has(s.kind)) ?? scored[0];
  // Coverage unreadable: the first scorer, as before there was any.
  const fallback = coverage.isError ? options[0] : (opening ?? options.filter((s) => (counts.get(s.id) ?? 0) > 0)[0]);
  const scorerId = raw === 'none' ? null : raw ? Number(raw) : (fallback?.id ?? null);
  const unscored = !raw && fallback === undefined;
  const setScorer = (id: number | null) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      next.set('scorer', id === null ? 'none' : String(id));
      return next;
    });
  return { scorers, options, scorerId, setScorer, unscored, ready: !scorers.isPending && !coverage.isPending };
}

export function ScorerPicker({ choice, allowNone = true }: { choice: ReturnType<typeof useScorerChoice>; allowNone?: boolean }) {
  const id = useId();
  const { options, scorerId, setScorer } = choice;
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="text-sm text-zinc-700">
        Scorer
      </label>
      <Select id={id} controlSize="sm" value={scorerId === null ? 'none' : String(scorerId)} onChange={(e) => setScorer(e.target.value === 'none' ? null : Number(e.target.value))}>
        {allowNone && <option value="none">None (success rate only)</option>}
        {options.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name} ({s.kind})
          </option>
        ))}
      </Select>
    </div>
  );
}
