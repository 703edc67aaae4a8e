import { useId } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Alert, Input, Select } from '@/components/ui';
import type { Scope } from '../api';
import { useReportDatasets } from '../hooks';

/**
 * What a project report covers (dataset, first and last UTC day), kept in the address
 * (?dataset=&from=&to=). `valid` is false while the range is reversed: the report waits.
 */
export function useScope(): { scope: Scope; valid: boolean; set: (name: 'dataset' | 'from' | 'to', value: string) => void } {
  const [params, setParams] = useSearchParams();
  const dataset = Number(params.get('dataset'));
  const from = params.get('from') || undefined;
  const to = params.get('to') || undefined;
  const scope: Scope = { dataset_id: Number.isInteger(dataset) && dataset > 0 ? dataset : undefined, date_from: from, date_to: to };
  const set = (name: 'dataset' | 'from' | 'to', value: string) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      if (value) next.set(name, value);
      else next.delete(name);
      return next;
    });
  return { scope, valid: !(from && to && to < from), set };
}

export function ScopeFilters({ projectId, state }: { projectId: number; state: ReturnType<typeof useScope> }) {
  const datasets = useReportDatasets(projectId);
  const id = useId();
  const { scope, valid, set } = state;
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-3">
        <label htmlFor={`${id}-ds`} className="text-sm text-zinc-700">
          Dataset
        </label>
        <Select id={`${id}-ds`} controlSize="sm" value={scope.dataset_id ?? ''} onChange={(e) => set('dataset', e.target.value)}>
          <option value="">All datasets</option>
          {(datasets.data?.items ?? []).map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </Select>
        <span className="flex items-center gap-2">
          <label htmlFor={`${id}-from`} className="text-sm text-zinc-700">
            From (UTC)
          </label>
          <span className="block w-44">
            <Input id={`${id}-from`} type="date" className="h-8" value={scope.date_from ?? ''} onChange={(e) => set('from', e.target.value)} />
          </span>
        </span>
        <span className="flex items-center gap-2">
          <label htmlFor={`${id}-to`} className="text-sm text-zinc-700">
            To (UTC)
          </label>
          <span className="block w-44">
            <Input
              id={`${id}-to`}
              type="date"
              className="h-8"
              value={scope.date_to ?? ''}
              invalid={!valid}
              aria-describedby={valid ? undefined : `${id}-err`}
              onChange={(e) => set('to', e.target.value)}
            />
          </span>
        </span>
      </div>
      {!valid && (
        <div id={`${id}-err`}>
          <Alert>The end date is before the start date: choose a range that ends on or after it starts.</Alert>
        </div>
      )}
    </div>
  );
}
