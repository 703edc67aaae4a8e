import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Badge, Button, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, LoadingRows, Pager, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { cn, focusRing } from '@/lib/cn';
import { relativeTime } from '@/lib/format';
import { CreatePromptDialog } from '../components/CreatePromptDialog';
import { PROMPTS_PAGE_SIZE, usePromptList } from '../hooks/usePrompts';

/** The project's prompts: newest first, each with its latest and production version. */
export function PromptsPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const canEdit = roleAtLeast(project.role, 'editor');
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = usePromptList(projectId, page);

  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / PROMPTS_PAGE_SIZE));
  const newButton = canEdit && <Button onClick={() => setCreating(true)}>New prompt</Button>;

  return (
    <Card aria-labelledby="prompts-heading">
      <CardHeader className="flex-wrap">
        <div className="min-w-0 flex-1 space-y-1">
          <CardTitle id="prompts-heading">Prompts</CardTitle>
          <p className="text-sm text-zinc-600">Templates runs render for each case. Versions never change: an edit saves a new one, with a changelog.</p>
        </div>
        {items.length > 0 && newButton}
      </CardHeader>
      <CardContent className="space-y-3">
        {list.isPending ? (
          <LoadingRows label="Loading prompts" />
        ) : list.isError ? (
          <ErrorState title="Could not load prompts" error={list.error} onRetry={() => list.refetch()} retrying={list.isFetching} />
        ) : items.length === 0 ? (
          <EmptyState
            title="No prompts yet"
            description={canEdit ? 'Write a template with {{variables}} filled from each case, then pick it when you configure a run.' : 'Editors of this project write prompts.'}
            action={newButton}
          />
        ) : (
          <>
            <Table aria-label="Prompts" aria-busy={list.isFetching || undefined}>
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Latest version</TH>
                  <TH>Production</TH>
                  <TH>Updated</TH>
                </TR>
              </THead>
              <TBody>
                {items.map((p) => (
                  <TR key={p.id}>
                    <TD className="min-w-40">
                      <Link to={`/projects/${projectId}/prompts/${p.id}`} className={cn('rounded-xl font-medium text-indigo-700 hover:underline', focusRing)}>
                        {p.name}
                      </Link>
                      {p.description && <div className="text-sm text-zinc-500">{p.description}</div>}
                    </TD>
                    <TD className="min-w-40">
                      <span className="tabular-nums">v{p.latest.number}</span>
                      {p.latest.note && <div className="line-clamp-2 text-sm text-zinc-500">{p.latest.note}</div>}
                    </TD>
                    <TD>{p.production_number !== null ? <Badge tone="success">v{p.production_number}</Badge> : <span className="text-sm text-zinc-500">None</span>}</TD>
                    <TD className="whitespace-nowrap text-zinc-600">{relativeTime(p.latest.created_at)}</TD>
                  </TR>
                ))}
              </TBody>
            </Table>
            {pages > 1 && <Pager label="Prompts pages" page={page} pageCount={pages} onPage={setPage} />}
          </>
        )}
      </CardContent>
      <CreatePromptDialog projectId={projectId} open={creating} onClose={() => setCreating(false)} />
    </Card>
  );
}
