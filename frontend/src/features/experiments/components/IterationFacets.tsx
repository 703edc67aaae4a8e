import { useId, useState } from 'react';
import { ErrorState, Skeleton } from '@/components/ui';
import { cn } from '@/lib/cn';
import { FacetHeatmap } from '@/features/reports/components/RunSections';
import type { CaseSplit } from '../api';
import { useIterationFacets } from '../hooks/useExperiments';

const SPLITS: { value: CaseSplit; label: string; hint: string }[] = [
  { value: 'refinement', label: 'Refinement set', hint: 'the cases the refiner sees' },
  { value: 'holdout', label: 'Held-out set', hint: 'never shown to the refiner' },
  { value: 'all', label: 'All cases', hint: 'every case of the iteration' },
];

/**
 * A segmented switch over the case splits: native radios, so Tab reaches the group and the
 * arrow keys move the choice, as screen readers expect of a radio group.
 */
export function SplitSwitch({ value, onChange }: { value: CaseSplit; onChange: (s: CaseSplit) => void }) {
  const name = useId();
  return (
    <fieldset className="flex flex-wrap items-center gap-2">
      <legend className="sr-only">Cases</legend>
      <span aria-hidden="true" className="text-sm text-zinc-700">
        Cases
      </span>
      <div className="inline-flex flex-wrap gap-1 rounded-xl border border-zinc-200 bg-zinc-50 p-1">
        {SPLITS.map((s) => (
          <label
            key={s.value}
            title={s.hint}
            className={cn(
              'relative inline-flex h-8 cursor-pointer items-center rounded-xl px-3 text-sm font-medium',
              'has-[:focus-visible]:ring-2 has-[:focus-visible]:ring-indigo-500 has-[:focus-visible]:ring-offset-2',
              value === s.value ? 'border border-zinc-200 bg-white text-indigo-700' : 'text-zinc-600 hover:text-zinc-900',
            )}
          >
            <input type="radio" className="sr-only" name={name} value={s.value} checked={value === s.value} onChange={() => onChange(s.value)} />
            {s.label}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** FR-RV-004 per iteration: the facet heatmap of the models' composites on the chosen split. */
export function IterationFacets({ projectId, experimentId, number, status }: { projectId: number; experimentId: number; number: number; status?: string }) {
  const [split, setSplit] = useState<CaseSplit>('all');
  const facets = useIterationFacets(projectId, experimentId, number, split, status);
  const chosen = SPLITS.find((s) => s.value === split)!;
  const data = facets.data;
  return (
    <section aria-label="Facets by split" className="space-y-2" data-testid="iteration-facets">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h4 className="text-sm font-semibold">Facets by tag, length and difficulty</h4>
        <SplitSwitch value={split} onChange={setSplit} />
      </div>
      <p className="text-sm text-zinc-600" aria-live="polite" data-testid="facet-split-summary">
        {chosen.label} ({chosen.hint})
        {data && data.split === split && data.split_cases !== null ? `: ${data.split_cases} cases` : ''}
        {facets.isFetching && data ? ' — loading…' : ''}
      </p>
      {facets.isPending ? (
        <Skeleton className="h-24 w-full" />
      ) : facets.isError ? (
        <ErrorState title="Facets could not be loaded" error={facets.error} onRetry={() => void facets.refetch()} retrying={facets.isFetching} />
      ) : data && data.models.length > 0 ? (
        <FacetHeatmap noun="model" facets={{ targets: data.models }} />
      ) : (
        <p className="text-sm text-zinc-600">Facets appear once this iteration is aggregated.</p>
      )}
    </section>
  );
}
