import { useId } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Select } from '@/components/ui';
import { POINTWISE } from '../api';
import { useScorers } from '../hooks';

/**
 * The scorer a report ranks by, kept in the address (?scorer=) so a report can be shared.
 * Without a choice the project's first pointwise scorer is used; "none" reads success only.
 */
export function useScorerChoice(projectId: number) {
  const scorers = useScorers(projectId);
  const [params, setParams] = useSearchParams();
  const raw = params.get('scorer');
  const options = (scorers.data?.items ?? []).filter(POINTWISE);
  const scorerId = raw === 'none' ? null : raw ? Number(raw) : (options[0]?.id ?? null);
  const setScorer = (id: number | null) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      next.set('scorer', id === null ? 'none' : String(id));
      return next;
    });
  return { scorers, options, scorerId, setScorer, ready: !scorers.isPending };
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
