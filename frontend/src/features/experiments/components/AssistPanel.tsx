import { useState } from 'react';
import { Alert, Button, Select } from '@/components/ui';
import { errorMessage, isApiError } from '@/api/errors';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { formatMicros } from '@/lib/money';
import { assistCriteria, assistOptions, type AssistOption } from '../lib/assist';
import type { Criterion } from '../lib/draft';
import { useAssist } from '../hooks/useExperiments';

export interface AssistAction {
  /** A unique id for the button. */
  kind: string;
  /** The endpoint under /assist: objectives, objective, rubric, prompts, prompt. */
  path: string;
  label: string;
  input: Record<string, unknown>;
  disabled?: boolean;
}

/**
 * AI assist (spec §7.2): each button is one LLM call through the server, charged to the
 * project; its cost is shown with the answer. Text answers are offered as options to use.
 */
export function AssistPanel({
  projectId,
  experimentId,
  actions,
  onPick,
  onPickRubric,
}: {
  projectId: number;
  experimentId: number | null;
  actions: AssistAction[];
  onPick?: (text: string, extra?: Record<string, unknown>) => void;
  onPickRubric?: (criteria: Criterion[]) => void;
}) {
  const models = useModelConfigs(projectId, false);
  const assist = useAssist(projectId);
  const [modelId, setModelId] = useState<number | ''>('');
  const [options, setOptions] = useState<AssistOption[]>([]);
  const [criteria, setCriteria] = useState<Criterion[]>([]);
  const [cost, setCost] = useState<number | null>(null);
  const chosenModel = modelId === '' ? models.data?.items[0]?.id : modelId;

  const run = (a: AssistAction) =>
    assist.mutate(
      { kind: a.kind, path: a.path, input: { ...a.input, model_id: chosenModel }, experimentId },
      {
        onSuccess: (r) => {
          setCost(r.cost_micros);
          setOptions(assistOptions(r.result));
          setCriteria(assistCriteria(r.result));
        },
      },
    );

  return (
    <section aria-label="AI assist" className="space-y-2 rounded-xl border border-indigo-100 bg-indigo-50/40 p-3">
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-sm font-medium text-zinc-900">✨ AI assist</span>
        {models.data && models.data.items.length > 0 && (
          <Select controlSize="sm" aria-label="Assist model" value={modelId === '' ? (chosenModel ?? '') : modelId} onChange={(e) => setModelId(Number(e.target.value))} className="max-w-full">
            {models.data.items.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </Select>
        )}
        {actions.map((a) => (
          <Button key={a.kind} size="sm" variant="secondary" disabled={a.disabled || !chosenModel} loading={assist.isPending && assist.variables?.kind === a.kind} onClick={() => run(a)}>
            {a.label}
          </Button>
        ))}
      </div>
      <p className="text-sm text-zinc-600" aria-live="polite" data-testid="assist-cost">
        {cost !== null ? `Last call cost ${formatMicros(cost)}, charged to the project.` : models.data?.items.length === 0 ? 'Add a model to use AI assist.' : 'Each call is charged to the project; its cost shows here.'}
      </p>
      {assist.isError && <Alert>{isApiError(assist.error) && (assist.error.status === 404 || assist.error.status === 405) ? 'AI assist is not available on this server yet.' : errorMessage(assist.error)}</Alert>}
      {options.length > 0 && onPick && (
        <ul className="space-y-2">
          {options.map((o, i) => (
            <li key={i} className="space-y-2 rounded-xl border border-zinc-200 bg-white p-3">
              <p className="text-sm font-medium">{o.title}</p>
              <p className="whitespace-pre-wrap break-words text-sm text-zinc-700">{o.text}</p>
              <Button size="sm" onClick={() => { onPick(o.text, o.extra); setOptions([]); }}>
                Use {o.title}
              </Button>
            </li>
          ))}
        </ul>
      )}
      {criteria.length > 0 && onPickRubric && (
        <div className="space-y-2 rounded-xl border border-zinc-200 bg-white p-3">
          <ul className="text-sm text-zinc-700">
            {criteria.map((c) => (
              <li key={c.name}>{`${c.name} (${c.weight}): ${c.description}`}</li>
            ))}
          </ul>
          <Button size="sm" onClick={() => { onPickRubric(criteria); setCriteria([]); }}>
            Use this rubric
          </Button>
        </div>
      )}
    </section>
  );
}
