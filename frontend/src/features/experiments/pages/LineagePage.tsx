import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { Badge, Button, EmptyState, ErrorState, Field, Select, Skeleton } from '@/components/ui';
import { usePrompt, useSetProduction } from '@/features/prompts/hooks/usePrompts';
import { VersionDiff } from '@/features/prompts/components/VersionDiff';
import { VersionEditor } from '@/features/prompts/components/VersionEditor';
import { ProductionError } from '@/features/prompts/components/ProductionError';
import { contentOf, type PromptVersion } from '@/features/prompts/api';
import { relativeTime } from '@/lib/format';
import { useExperiment } from '../hooks/useExperiments';
import { buildTree, type TreeNode } from '../lib/tree';

/** FR-PR-003 / §9.3: the experiment's prompt versions as a tree, diffs, manual edits, production. */
export function LineagePage() {
  const projectId = Number(useParams().projectId);
  const experimentId = Number(useParams().experimentId);
  const experiment = useExperiment(projectId, experimentId);
  const promptId = experiment.data?.prompt_id ?? null;
  const prompt = usePrompt(projectId, promptId ?? 0);
  const production = useSetProduction(projectId, promptId ?? 0);
  const [editing, setEditing] = useState<PromptVersion | null>(null);
  const [fromId, setFrom] = useState<number | null>(null);
  const [toId, setTo] = useState<number | null>(null);

  if (experiment.isPending) return <Skeleton className="h-64 w-full" />;
  if (experiment.isError) return <ErrorState title="Could not load the experiment" error={experiment.error} onRetry={() => experiment.refetch()} retrying={experiment.isFetching} />;
  const back = `/projects/${projectId}/experiments/${experimentId}`;
  const header = (
    <p className="text-sm">
      <Link to={back} className="text-zinc-600 hover:text-zinc-900">
        ← {experiment.data.name}
      </Link>
    </p>
  );
  if (promptId === null) return <div className="space-y-4">{header}<EmptyState title="No prompt versions yet" description="The seed prompt becomes version 1 when the experiment starts." /></div>;
  if (prompt.isPending) return <Skeleton className="h-64 w-full" />;
  if (prompt.isError) return <ErrorState title="Could not load the prompt" error={prompt.error} onRetry={() => prompt.refetch()} retrying={prompt.isFetching} />;

  const p = prompt.data;
  const versions = p.versions;
  const byId = new Map(versions.map((v) => [v.id, v]));
  const sorted = [...versions].sort((a, b) => a.number - b.number);
  const from = byId.get(fromId ?? -1) ?? sorted[sorted.length - 2] ?? sorted[0];
  const to = byId.get(toId ?? -1) ?? sorted[sorted.length - 1];
  const best = experiment.data.best_prompt_version_id;
  const current = experiment.data.current_prompt_version_id;

  const node = (n: TreeNode<PromptVersion>) => {
    const v = n.item;
    return (
      <li key={v.id} className="space-y-2">
        <div className="space-y-1 rounded-xl border border-zinc-200 bg-white p-3" data-testid={`version-${v.number}`}>
          <div className="flex flex-wrap items-center gap-2">
            <span className="font-medium">v{v.number}</span>
            {v.id === p.production_version_id && <Badge tone="success">Production</Badge>}
            {v.id === best && <Badge tone="indigo">Best (held-out)</Badge>}
            {v.id === current && <Badge>Current</Badge>}
            <span className="text-sm text-zinc-500">
              {v.author ?? 'refiner'} · {relativeTime(v.created_at)}
            </span>
          </div>
          <p className="break-words text-sm text-zinc-700">{v.note ?? 'No changelog.'}</p>
          <div className="flex flex-wrap gap-2">
            <Button size="sm" variant="secondary" onClick={() => setEditing(v)}>
              Edit as new version
            </Button>
            {v.id !== p.production_version_id && (
              <Button size="sm" variant="secondary" loading={production.isPending && production.variables?.versionId === v.id} onClick={() => production.mutate({ versionId: v.id, version: p.row_version })}>
                Mark production
              </Button>
            )}
          </div>
        </div>
        {n.children.length > 0 && <ul className="ml-3 space-y-2 border-l-2 border-zinc-200 pl-3">{n.children.map(node)}</ul>}
      </li>
    );
  };

  return (
    <div className="min-w-0 space-y-4">
      {header}
      <h2 className="text-lg font-semibold">Prompt lineage — {p.name}</h2>
      <ProductionError projectId={projectId} production={production} numberOf={(id) => byId.get(id)?.number} />
      {editing && (
        <section aria-label="New version" className="rounded-xl border border-indigo-200 bg-white p-3">
          <VersionEditor key={editing.id} projectId={projectId} promptId={p.id} parent={editing} onCancel={() => setEditing(null)} onSaved={(v) => { setEditing(null); setTo(v.id); }} />
        </section>
      )}
      <div className="grid gap-4 lg:grid-cols-[22rem_1fr]">
        <section aria-label="Version tree" className="min-w-0 space-y-2">
          <h3 className="text-base font-semibold">Versions</h3>
          <ul className="space-y-2">{buildTree(versions).map(node)}</ul>
        </section>
        <section aria-label="Compare versions" className="min-w-0 space-y-3">
          <h3 className="text-base font-semibold">Diff between two versions</h3>
          <div className="grid gap-2 sm:grid-cols-2">
            <Field id="lin-from" label="From">
              <Select id="lin-from" className="w-full" value={from?.id ?? ''} onChange={(e) => setFrom(Number(e.target.value))}>
                {sorted.map((v) => (
                  <option key={v.id} value={v.id}>{`v${v.number}`}</option>
                ))}
              </Select>
            </Field>
            <Field id="lin-to" label="To">
              <Select id="lin-to" className="w-full" value={to?.id ?? ''} onChange={(e) => setTo(Number(e.target.value))}>
                {sorted.map((v) => (
                  <option key={v.id} value={v.id}>{`v${v.number}`}</option>
                ))}
              </Select>
            </Field>
          </div>
          {from && to && <VersionDiff from={contentOf(from)} to={contentOf(to)} fromLabel={`v${from.number}`} toLabel={`v${to.number}`} />}
        </section>
      </div>
    </div>
  );
}
