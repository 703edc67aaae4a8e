import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Alert, Badge, Button, buttonClasses, Card, CardContent, CardHeader, CardTitle, Checkbox, EmptyState, ErrorState, Label, LoadingRows, Pager, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { focusRing } from '@/lib/cn';
import { absoluteTime } from '@/lib/format';
import { PAGE_SIZE, useArchiveScorer, useScorerKinds, useScorers, type Scorer } from '../hooks/useScorers';

/** The project's scorers: filter by kind, open one to save a new version, archive and restore. */
export function ScorersPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const canManage = roleAtLeast(project.role, 'editor');
  const [page, setPage] = useState(1);
  const [kind, setKind] = useState('');
  const [showArchived, setShowArchived] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const kinds = useScorerKinds(projectId);
  const scorers = useScorers(projectId, page, kind, showArchived);
  const archive = useArchiveScorer(projectId);
  const items = scorers.data?.items ?? [];
  const pageCount = Math.max(1, Math.ceil((scorers.data?.total ?? 0) / PAGE_SIZE));
  const newLink = canManage && (
    <Link to={`/projects/${projectId}/scorers/new`} className={buttonClasses('primary')}>
      New scorer
    </Link>
  );

  function toggleArchive(s: Scorer, next: boolean) {
    setProblem(null);
    archive.mutate({ id: s.id, archive: next }, { onError: (e) => setProblem(errorMessage(e)) });
  }

  return (
    <Card aria-labelledby="scorers-heading">
      <CardHeader className="flex-wrap">
        <div className="min-w-0 flex-1 space-y-1 sm:min-w-64">
          <CardTitle id="scorers-heading">Scorers</CardTitle>
          <p className="text-sm text-zinc-600">
            What a run checks in each output: reference checks, rules, safety, LLM judges, RAG metrics, pairwise judges and manual
            review. Each save is a new version; runs keep the version they used.
          </p>
        </div>
        {newLink}
      </CardHeader>
      <CardContent className="space-y-3">
        <div className="flex flex-wrap items-end gap-4">
          <div className="space-y-1">
            <Label htmlFor="scorers-kind">Kind</Label>
            <Select
              id="scorers-kind"
              value={kind}
              onChange={(e) => {
                setKind(e.target.value);
                setPage(1);
              }}
            >
              <option value="">All kinds</option>
              {kinds.data?.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.name}
                </option>
              ))}
            </Select>
          </div>
          <div className="flex h-10 items-center gap-2">
            <Checkbox
              id="scorers-show-archived"
              checked={showArchived}
              onChange={(e) => {
                setShowArchived(e.target.checked);
                setPage(1);
              }}
            />
            <Label htmlFor="scorers-show-archived" className="font-normal">
              Show archived
            </Label>
          </div>
        </div>
        {problem && <Alert>{problem}</Alert>}
        {scorers.isPending ? (
          <LoadingRows label="Loading scorers" />
        ) : scorers.isError ? (
          <ErrorState title="Could not load scorers" error={scorers.error} onRetry={() => scorers.refetch()} retrying={scorers.isFetching} />
        ) : items.length === 0 ? (
          <EmptyState
            title={kind || showArchived ? 'No scorers match' : 'No scorers yet'}
            description={canManage ? 'A scorer checks each output of a run; judges and rubrics are set up here.' : 'Editors of this project add scorers.'}
            action={!kind && !showArchived ? newLink : undefined}
          />
        ) : (
          <>
            <Table aria-label="Scorers">
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Kind</TH>
                  <TH className="text-right">Version</TH>
                  <TH>Updated</TH>
                  <TH>Status</TH>
                  {canManage && (
                    <TH>
                      <span className="sr-only">Actions</span>
                    </TH>
                  )}
                </TR>
              </THead>
              <TBody>
                {items.map((s) => (
                  <TR key={s.id} className={s.archived_at ? 'bg-zinc-50' : undefined}>
                    <TD className="min-w-32 font-medium">
                      <Link to={`/projects/${projectId}/scorers/${s.id}`} className={`rounded-xl text-indigo-700 underline ${focusRing}`}>
                        {s.name}
                      </Link>
                      {s.description && <div className="break-words text-sm font-normal text-zinc-500">{s.description}</div>}
                    </TD>
                    <TD className="text-sm">
                      {kinds.data?.find((k) => k.kind === s.kind)?.name ?? s.kind} <span className="font-mono text-xs text-zinc-400">{s.kind}</span>
                    </TD>
                    <TD className="text-right tabular-nums">v{s.latest.number}</TD>
                    <TD className="whitespace-nowrap text-sm">{absoluteTime(s.latest.created_at)}</TD>
                    <TD>{s.archived_at ? <Badge tone="neutral">Archived</Badge> : <Badge tone="success">Active</Badge>}</TD>
                    {canManage && (
                      <TD>
                        <div className="flex justify-end gap-2">
                          <Button
                            variant="secondary"
                            size="sm"
                            aria-label={`${s.archived_at ? 'Restore' : 'Archive'} ${s.name}`}
                            loading={archive.isPending && archive.variables?.id === s.id}
                            onClick={() => toggleArchive(s, !s.archived_at)}
                          >
                            {s.archived_at ? 'Restore' : 'Archive'}
                          </Button>
                        </div>
                      </TD>
                    )}
                  </TR>
                ))}
              </TBody>
            </Table>
            {pageCount > 1 && <Pager label="Scorers pagination" page={page} pageCount={pageCount} onPage={setPage} />}
          </>
        )}
      </CardContent>
    </Card>
  );
}
