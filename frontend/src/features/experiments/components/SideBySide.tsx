import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Button, Field, Select, Skeleton } from '@/components/ui';
import { request, runPath, type Output, type Page } from '@/features/runs/api';
import type { IterationSummary } from '../api';

/** `phase`: the iteration's status, in the key so that outputs read while its run was still
 * going (cells without text yet) are read again once it moves on. */
function useRunOutputs(projectId: number, runId: number | null, phase: string | undefined) {
  return useQuery({
    queryKey: ['project', projectId, 'run', runId ?? 0, 'outputs', 'sxs', phase ?? ''],
    enabled: runId !== null,
    queryFn: ({ signal }) => request<Page<Output>>('GET', `${runPath(projectId, runId ?? 0)}/outputs`, { query: { page: 1, page_size: 100 }, signal }),
  });
}

/** Two prompt versions' outputs for the same case, next to each other (stacked when narrow). */
export function SideBySide({ projectId, iterations }: { projectId: number; iterations: IterationSummary[] }) {
  const withRun = iterations.filter((i) => i.run_id !== null).sort((a, b) => a.number - b.number);
  // Until the user picks: the last two iterations (previous on the left).
  const [pickedA, setA] = useState<number | null>(null);
  const [pickedB, setB] = useState<number | null>(null);
  const aId = pickedA ?? (withRun.length > 1 ? withRun[withRun.length - 2].id : (withRun[0]?.id ?? null));
  const bId = pickedB ?? (withRun.length > 0 ? withRun[withRun.length - 1].id : null);
  const [index, setIndex] = useState(0);
  const a = withRun.find((i) => i.id === aId) ?? null;
  const b = withRun.find((i) => i.id === bId) ?? null;
  const outA = useRunOutputs(projectId, a?.run_id ?? null, a?.status);
  const outB = useRunOutputs(projectId, b?.run_id ?? null, b?.status);
  if (withRun.length === 0) return <p className="text-sm text-zinc-600">Outputs appear once an iteration has run.</p>;
  const cases = [...new Set((outA.data?.items ?? []).map((o) => o.case_id))];
  const caseId = cases[Math.min(index, Math.max(0, cases.length - 1))];
  const pick = (data: Page<Output> | undefined) => (data?.items ?? []).filter((o) => o.case_id === caseId);
  const picker = (id: string, label: string, value: number | null, set: (v: number) => void) => (
    <Field id={id} label={label}>
      <Select id={id} className="w-full" value={value ?? ''} onChange={(e) => set(Number(e.target.value))}>
        {withRun.map((i) => (
          <option key={i.id} value={i.id}>{`Iteration ${i.number}`}</option>
        ))}
      </Select>
    </Field>
  );
  const column = (title: string, items: Output[]) => (
    <div className="min-w-0 space-y-2">
      <h4 className="text-sm font-semibold">{title}</h4>
      {items.length === 0 && <p className="text-sm text-zinc-600">No output for this case.</p>}
      {items.map((o) => (
        <article key={o.id} className="space-y-1 rounded-xl border border-zinc-200 bg-white p-3">
          <p className="text-sm text-zinc-600">{o.label}</p>
          <p className="whitespace-pre-wrap break-words text-sm">{o.text ?? o.error ?? '—'}</p>
        </article>
      ))}
    </div>
  );
  return (
    <section aria-label="Side-by-side outputs" className="space-y-3">
      <div className="grid gap-2 sm:grid-cols-2">
        {picker('sxs-a', 'Left', aId, setA)}
        {picker('sxs-b', 'Right', bId, setB)}
      </div>
      {(outA.isPending || outB.isPending) && <Skeleton className="h-24 w-full" />}
      {cases.length > 0 && (
        <>
          <div className="flex flex-wrap items-center justify-between gap-2">
            <span className="text-sm text-zinc-700">
              Case {Math.min(index, cases.length - 1) + 1} of {cases.length}
            </span>
            <div className="flex gap-2">
              <Button size="sm" variant="secondary" disabled={index <= 0} onClick={() => setIndex((i) => Math.max(0, i - 1))} aria-label="Previous case">
                ←
              </Button>
              <Button size="sm" variant="secondary" disabled={index >= cases.length - 1} onClick={() => setIndex((i) => Math.min(cases.length - 1, i + 1))} aria-label="Next case">
                →
              </Button>
            </div>
          </div>
          <div className="grid gap-3 md:grid-cols-2">
            {column(a ? `Iteration ${a.number}` : 'Left', pick(outA.data))}
            {column(b ? `Iteration ${b.number}` : 'Right', pick(outB.data))}
          </div>
        </>
      )}
    </section>
  );
}
