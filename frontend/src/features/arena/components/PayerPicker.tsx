import { useEffect } from 'react';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { useProjects } from '@/features/projects/hooks/useProjects';

export interface Payer {
  projectId: number | null;
  judge: string | null;
}

const selectClass =
  'mt-1 h-10 w-full rounded-xl border border-zinc-200 bg-white px-3 text-sm text-zinc-900 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500';

function JudgeModel({ projectId, value, onChange }: { projectId: number; value: string | null; onChange: (judge: string | null) => void }) {
  const models = useModelConfigs(projectId, false);
  const items = models.data?.items ?? [];
  useEffect(() => {
    if (models.isSuccess && (value === null || !items.some((m) => String(m.id) === value))) onChange(items[0] ? String(items[0].id) : null);
  }, [models.isSuccess, items, value, onChange]);
  if (models.isPending) return <p className="text-sm text-zinc-600">Loading the project's models…</p>;
  if (items.length === 0) return <p className="text-sm text-zinc-600">This project has no model: add one under its Models tab to judge with it.</p>;
  return (
    <div>
      <label htmlFor="arena-judge" className="block text-sm font-medium text-zinc-900">
        Judge model
      </label>
      <select id="arena-judge" value={value ?? ''} onChange={(e) => onChange(e.target.value || null)} className={selectClass}>
        {items.map((m) => (
          <option key={m.id} value={String(m.id)}>
            {m.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Judge runs call a model: the project whose budget pays (as its editor, or within the arena
 * allowance its admin set), and which of its models judges. */
export function PayerPicker({ value, onChange }: { value: Payer; onChange: (p: Payer) => void }) {
  const projects = useProjects({ page: 1 });
  const items = projects.data?.items ?? [];
  useEffect(() => {
    if (value.projectId === null && items.length > 0) onChange({ projectId: items[0].id, judge: null });
  }, [value.projectId, items, onChange]);
  if (projects.isPending) return <p className="text-sm text-zinc-600">Loading your projects…</p>;
  if (items.length === 0)
    return <p className="text-sm text-zinc-600">Judge runs are paid by one of your projects: create a project with a model first.</p>;
  return (
    <div className="grid gap-2 sm:grid-cols-2 lg:grid-cols-1 xl:grid-cols-2">
      <div>
        <label htmlFor="arena-payer" className="block text-sm font-medium text-zinc-900">
          Paid by project
        </label>
        <select
          id="arena-payer"
          value={value.projectId ?? ''}
          onChange={(e) => onChange({ projectId: e.target.value ? Number(e.target.value) : null, judge: null })}
          className={selectClass}
        >
          {items.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </div>
      {value.projectId !== null && (
        <JudgeModel projectId={value.projectId} value={value.judge} onChange={(judge) => onChange({ ...value, judge })} />
      )}
    </div>
  );
}

/** Ship to Prod judges the hidden traces only with a judge the operator approved: they never
 * go to an endpoint of a project's own (issue 31). */
export function ShipJudgePicker({ judges, value, onChange }: { judges: Array<{ id: string; model: string }>; value: string | null; onChange: (judge: string) => void }) {
  useEffect(() => {
    if (judges.length > 0 && !judges.some((j) => j.id === value)) onChange(judges[0].id);
  }, [judges, value, onChange]);
  return (
    <div>
      <label htmlFor="arena-ship-judge" className="block text-sm font-medium text-zinc-900">
        Ship to Prod judge
      </label>
      {judges.length > 0 && (
        <select id="arena-ship-judge" value={value ?? ''} onChange={(e) => onChange(e.target.value)} className={selectClass}>
          {judges.map((j) => (
            <option key={j.id} value={j.id}>
              {j.id}
            </option>
          ))}
        </select>
      )}
      <p className="mt-1 text-sm text-zinc-600">
        Your project's own models judge dev traces only; the hidden set is judged by a judge this instance approved.
      </p>
    </div>
  );
}
