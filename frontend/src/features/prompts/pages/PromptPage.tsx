import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { Badge, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, LoadingRows } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { cn, focusRing } from '@/lib/cn';
import type { PromptVersion } from '../api';
import { ComparePanel } from '../components/ComparePanel';
import { ProductionError } from '../components/ProductionError';
import { VersionDetails } from '../components/VersionDetails';
import { VersionEditor } from '../components/VersionEditor';
import { VersionsTable } from '../components/VersionsTable';
import { usePrompt, useSetProduction } from '../hooks/usePrompts';

/** One prompt: its versions and lineage, an editor that saves new versions, compare, production. */
export function PromptPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const promptId = Number(useParams().promptId);
  const canEdit = roleAtLeast(project.role, 'editor');
  const prompt = usePrompt(projectId, promptId);
  const production = useSetProduction(projectId, promptId);
  const [search, setSearch] = useSearchParams();
  const [editing, setEditing] = useState<PromptVersion | null>(null);
  const back = (
    <Link to={`/projects/${projectId}/prompts`} className={cn('rounded-xl text-sm text-indigo-700 hover:underline', focusRing)}>
      ← All prompts
    </Link>
  );

  if (prompt.isPending) return <LoadingRows label="Loading prompt" rows={5} />;
  if (prompt.isError) {
    if (isApiError(prompt.error) && prompt.error.status === 404)
      return <EmptyState title="Prompt not found" description="It does not exist in this project." action={back} />;
    return <ErrorState title="Could not load the prompt" error={prompt.error} onRetry={() => prompt.refetch()} retrying={prompt.isFetching} />;
  }

  const p = prompt.data;
  const wanted = Number(search.get('version'));
  const selected = p.versions.find((v) => v.id === wanted) ?? p.versions[0];
  const hrefOf = (id: number) => `/projects/${projectId}/prompts/${promptId}?version=${id}`;
  const show = (id: number) => setSearch({ version: String(id) });

  return (
    <div className="space-y-4">
      <div className="space-y-1">
        {back}
        <div className="flex flex-wrap items-center gap-2">
          <h2 className="break-words text-lg font-semibold text-zinc-900">{p.name}</h2>
          {p.production_number !== null && <Badge tone="success">Production: v{p.production_number}</Badge>}
        </div>
        {p.description && <p className="text-sm text-zinc-600">{p.description}</p>}
      </div>

      {editing && (
        <Card aria-labelledby="editor-heading">
          <CardHeader>
            <CardTitle id="editor-heading">New version from v{editing.number}</CardTitle>
          </CardHeader>
          <CardContent>
            <VersionEditor
              key={editing.id}
              projectId={projectId}
              promptId={promptId}
              parent={editing}
              onCancel={() => setEditing(null)}
              onSaved={(v) => {
                setEditing(null);
                show(v.id);
              }}
            />
          </CardContent>
        </Card>
      )}

      <Card aria-labelledby="versions-heading">
        <CardHeader>
          <CardTitle id="versions-heading">Versions ({p.versions.length})</CardTitle>
        </CardHeader>
        <CardContent className="space-y-3">
          <ProductionError projectId={projectId} production={production} numberOf={(id) => p.versions.find((v) => v.id === id)?.number} />
          <VersionsTable
            prompt={p}
            selectedId={selected.id}
            canEdit={canEdit}
            hrefOf={hrefOf}
            onEdit={(v) => {
              setEditing(v);
              window.scrollTo({ top: 0 });
            }}
            onProduction={(v) => production.mutate({ versionId: v.id, version: p.row_version })}
            marking={production.isPending ? (production.variables?.versionId ?? null) : null}
          />
        </CardContent>
      </Card>

      <Card aria-labelledby="version-heading">
        <CardHeader>
          <CardTitle id="version-heading">
            v{selected.number}
            {selected.id === p.production_version_id && ' (production)'}
          </CardTitle>
        </CardHeader>
        <CardContent>
          <VersionDetails projectId={projectId} promptId={promptId} version={selected} hrefOf={hrefOf} />
        </CardContent>
      </Card>

      <Card role="region" aria-labelledby="compare-heading">
        <CardHeader>
          <CardTitle id="compare-heading">Compare versions</CardTitle>
        </CardHeader>
        <CardContent>
          <ComparePanel key={p.versions.length} versions={p.versions} />
        </CardContent>
      </Card>
    </div>
  );
}
