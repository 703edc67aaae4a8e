import { Alert, Spinner } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import type { RunEstimateBody } from '@/api/providerTypes';
import { formatMicros } from '@/lib/money';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { useRunEstimate } from '../hooks/useRuns';

/** "$0.01 – $0.03", or one figure when the range is a point. */
export function formatRange(low: number, high: number): string {
  return low === high ? formatMicros(low) : `${formatMicros(low)} – ${formatMicros(high)}`;
}

/** The cost range of the run being planned, shown before it starts. */
export function RunEstimate({ projectId, datasetId, modelIds, repeats }: { projectId: number; datasetId: number | null; modelIds: number[]; repeats: number }) {
  // Debounce a primitive key (not an object, which would be new on every render).
  const key = datasetId && modelIds.length > 0 ? `${datasetId}|${[...modelIds].sort((a, b) => a - b).join(',')}|${repeats}` : '';
  const debounced = useDebouncedValue(key, 250);
  let body: RunEstimateBody | null = null;
  if (debounced) {
    const [d, ids, r] = debounced.split('|');
    body = { dataset_id: Number(d), model_ids: ids.split(',').map(Number), repeats: Number(r) };
  }
  const estimate = useRunEstimate(projectId, body);

  if (!key) return null;
  if (estimate.isError) {
    return <Alert tone="info">No cost estimate: {errorMessage(estimate.error)}</Alert>;
  }
  if (!estimate.data) {
    return (
      <p role="status" className="flex items-center gap-2 text-sm text-zinc-600">
        <Spinner /> Estimating the cost…
      </p>
    );
  }
  const e = estimate.data;
  const unpriced = e.per_model.filter((m) => !m.priced || e.unpriced_models.includes(m.model_id));
  const allUnpriced = unpriced.length === e.per_model.length;
  return (
    <div role="status" aria-live="polite" data-testid="run-estimate" className="space-y-2 rounded-xl border border-zinc-200 bg-zinc-50 p-3">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <span className="text-sm font-medium text-zinc-900">Estimated cost</span>
        <span className="text-base font-semibold tabular-nums text-zinc-900">
          {allUnpriced ? 'Unknown' : formatRange(e.low_micros, e.high_micros)}
          {!allUnpriced && !e.complete && <span className="text-sm font-normal text-amber-800"> + unpriced</span>}
        </span>
      </div>
      <p className="text-sm text-zinc-600">
        {e.calls.toLocaleString('en-US')} calls ({e.cases.toLocaleString('en-US')} cases × {e.per_model.length}{' '}
        {e.per_model.length === 1 ? 'model' : 'models'}
        {e.repeats > 1 ? ` × ${e.repeats} repeats` : ''}). The range spans short to maximum-length replies; cached
        replies cost nothing.
        {estimate.isFetching && <span className="sr-only"> Updating.</span>}
      </p>
      {unpriced.length > 0 && (
        <p className="text-sm text-amber-800">
          Unpriced, so not in the total: {unpriced.map((m) => m.name).join(', ')}. Their cost is unknown, not zero.
        </p>
      )}
    </div>
  );
}
