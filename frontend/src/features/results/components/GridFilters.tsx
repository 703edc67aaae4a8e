import { useEffect, useState } from 'react';
import { Button, Checkbox, Input, Select } from '@/components/ui';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { filterProblem, NO_FILTERS, type GridFilters, type Sort } from '../api';

const SORTS: Array<[Sort, string]> = [
  ['position', 'Dataset order'],
  ['score', 'Mean score'],
  ['latency', 'Latency'],
  ['cost', 'Cost'],
  ['tokens', 'Tokens'],
  ['errors', 'Failed cells'],
];

const label = 'flex flex-col gap-1 text-sm font-medium text-zinc-700';

/**
 * Sorting and filtering of the grid. Text fields (score bounds, error class, tag) apply
 * after a short pause in typing; a score range the server would refuse is said here.
 */
export function GridFiltersBar({
  value,
  onChange,
  targets,
  scorers,
}: {
  value: GridFilters;
  onChange: (f: GridFilters) => void;
  targets: Array<{ id: number; label: string }>;
  scorers: Array<{ id: number; name: string }>;
}) {
  const [text, setText] = useState({ scoreMin: value.scoreMin, scoreMax: value.scoreMax, errorClass: value.errorClass, tag: value.tag });
  const debounced = useDebouncedValue(text, 300);
  useEffect(() => {
    if (
      debounced.scoreMin !== value.scoreMin ||
      debounced.scoreMax !== value.scoreMax ||
      debounced.errorClass !== value.errorClass ||
      debounced.tag !== value.tag
    ) {
      onChange({ ...value, ...debounced });
    }
  }, [debounced]);
  const problem = filterProblem({ ...value, ...text });
  const set = (patch: Partial<GridFilters>) => onChange({ ...value, ...patch });
  const shown = value.targetIds.length ? value.targetIds : targets.map((t) => t.id);
  const toggle = (id: number) => {
    const next = shown.includes(id) ? shown.filter((t) => t !== id) : [...shown, id];
    if (next.length === 0) return; // at least one column stays
    const ordered = targets.map((t) => t.id).filter((t) => next.includes(t));
    set({
      targetIds: ordered.length === targets.length ? [] : ordered,
      sortTargetId: value.sortTargetId !== null && !ordered.includes(value.sortTargetId) ? null : value.sortTargetId,
    });
  };

  return (
    <form role="search" aria-label="Sort and filter the results" className="space-y-3 rounded-xl border border-zinc-200 bg-white p-3" onSubmit={(e) => e.preventDefault()}>
      <div className="flex flex-wrap items-end gap-3">
        <label className={label}>
          Sort by
          <Select controlSize="sm" value={value.sort} onChange={(e) => set({ sort: e.target.value as Sort })}>
            {SORTS.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </Select>
        </label>
        <label className={label}>
          Order
          <Select controlSize="sm" value={value.order} onChange={(e) => set({ order: e.target.value as 'asc' | 'desc' })}>
            <option value="asc">Ascending</option>
            <option value="desc">Descending</option>
          </Select>
        </label>
        <label className={label}>
          Over
          <Select
            controlSize="sm"
            value={value.sortTargetId ?? ''}
            disabled={value.sort === 'position'}
            onChange={(e) => set({ sortTargetId: e.target.value ? Number(e.target.value) : null })}
          >
            <option value="">Every shown target</option>
            {targets
              .filter((t) => shown.includes(t.id))
              .map((t) => (
                <option key={t.id} value={t.id}>
                  {t.label}
                </option>
              ))}
          </Select>
        </label>
        <label className={label}>
          Scores of
          <Select controlSize="sm" value={value.scorerId ?? ''} onChange={(e) => set({ scorerId: e.target.value ? Number(e.target.value) : null })}>
            <option value="">Every scorer</option>
            {scorers.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </Select>
        </label>
        <label className={label}>
          Score from
          <Input className="h-8 w-20" inputMode="decimal" placeholder="0" value={text.scoreMin} invalid={!!problem} onChange={(e) => setText({ ...text, scoreMin: e.target.value })} />
        </label>
        <label className={label}>
          to
          <Input className="h-8 w-20" inputMode="decimal" placeholder="1" value={text.scoreMax} invalid={!!problem} onChange={(e) => setText({ ...text, scoreMax: e.target.value })} />
        </label>
        <label className={label}>
          Verdict
          <Select controlSize="sm" value={value.verdict} onChange={(e) => set({ verdict: e.target.value as GridFilters['verdict'] })}>
            <option value="">Any</option>
            <option value="passed">Passed</option>
            <option value="failed">Failed</option>
            <option value="unscored">Not scored</option>
          </Select>
        </label>
        <label className={label}>
          Status
          <Select controlSize="sm" value={value.status} onChange={(e) => set({ status: e.target.value as GridFilters['status'] })}>
            <option value="">Any</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed</option>
            <option value="skipped">Skipped</option>
            <option value="pending">Pending</option>
            <option value="running">Running</option>
          </Select>
        </label>
        <label className={label}>
          Error class
          <Input className="h-8 w-36" placeholder="e.g. timeout" value={text.errorClass} onChange={(e) => setText({ ...text, errorClass: e.target.value })} />
        </label>
        <label className={label}>
          Tag
          <Input className="h-8 w-32" value={text.tag} onChange={(e) => setText({ ...text, tag: e.target.value })} />
        </label>
        <Button
          type="button"
          variant="secondary"
          size="sm"
          onClick={() => {
            setText({ scoreMin: '', scoreMax: '', errorClass: '', tag: '' });
            onChange(NO_FILTERS);
          }}
        >
          Clear
        </Button>
      </div>
      {targets.length > 1 && (
        <fieldset className="flex flex-wrap items-center gap-3 text-sm">
          <legend className="sr-only">Targets shown</legend>
          <span className="font-medium text-zinc-700" aria-hidden="true">
            Targets shown:
          </span>
          {targets.map((t) => (
            <label key={t.id} className="flex items-center gap-1.5">
              <Checkbox checked={shown.includes(t.id)} onChange={() => toggle(t.id)} />
              {t.label}
            </label>
          ))}
        </fieldset>
      )}
      {problem && (
        <p role="alert" className="text-sm text-red-700">
          {problem}
        </p>
      )}
    </form>
  );
}
