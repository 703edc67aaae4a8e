import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Pager, Badge, Button, Card, CardContent, CardHeader, CardTitle, Checkbox, EmptyState, ErrorState, Input, Label, LoadingRows, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { cn, focusRing } from '@/lib/cn';
import { relativeTime } from '@/lib/format';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { DATASET_KINDS, DIFFICULTIES, KIND_LABELS } from '../api';
import { GenerateDialog } from '@/features/generation/components/GenerateDialog';
import { GenerationJobs } from '@/features/generation/components/GenerationJobs';
import { GENERATION_KINDS, type GenerationKind } from '@/features/generation/api';
import { CreateDatasetDialog } from '../components/CreateDatasetDialog';
import { TagManagerDialog } from '../components/TagManagerDialog';
import { DATASETS_PAGE_SIZE, useDatasetList, useProjectTags } from '../hooks/useDatasets';

/** The project's datasets: search, kind, tag and difficulty filters, archived on demand; the tag manager. */
export function DatasetsPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const canEdit = roleAtLeast(project.role, 'editor');
  const [q, setQ] = useState('');
  const [tag, setTag] = useState('');
  const [kind, setKind] = useState('');
  const [difficulty, setDifficulty] = useState('');
  const [managingTags, setManagingTags] = useState(false);
  const tags = useProjectTags(projectId);
  const [includeArchived, setIncludeArchived] = useState(false);
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const [generating, setGenerating] = useState<{ kind: GenerationKind; jobId: number | null } | null>(null);
  const debouncedQ = useDebouncedValue(q, 300);
  const debouncedTag = useDebouncedValue(tag, 300);
  const list = useDatasetList(projectId, { page, q: debouncedQ, kind, tag: debouncedTag, includeArchived, difficulty });

  const items = list.data?.items ?? [];
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / DATASETS_PAGE_SIZE));
  const filtered = !!(debouncedQ.trim() || debouncedTag.trim() || kind || difficulty || includeArchived);
  const newButton = canEdit && <Button onClick={() => setCreating(true)}>New dataset</Button>;
  const generateButtons = canEdit && (
    <div role="group" aria-label="Generate with a model" className="flex flex-wrap gap-2">
      {GENERATION_KINDS.map((k) => (
        <Button key={k} variant="secondary" onClick={() => setGenerating({ kind: k, jobId: null })}>
          Generate {k}
        </Button>
      ))}
    </div>
  );

  const reset = <T,>(set: (v: T) => void) => (v: T) => {
    set(v);
    setPage(1);
  };

  return (
    <Card aria-labelledby="datasets-heading">
      <CardHeader className="flex-wrap">
        <div className="min-w-64 flex-1 space-y-1">
          <CardTitle id="datasets-heading">Datasets</CardTitle>
          <p className="text-sm text-zinc-600">Versioned evaluation data: every edit makes a new version, and runs pin the version they used.</p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {generateButtons}
          {canEdit && (tags.data?.length ?? 0) > 0 && (
            <Button variant="secondary" onClick={() => setManagingTags(true)}>
              Manage tags
            </Button>
          )}
          {(items.length > 0 || filtered) && newButton}
        </div>
      </CardHeader>
      <CardContent className="space-y-3">
        <div className="flex flex-wrap items-end gap-3" role="search" aria-label="Filter datasets">
          <div className="min-w-48 flex-1 space-y-1">
            <Label htmlFor="datasets-q">Search</Label>
            <Input id="datasets-q" type="search" placeholder="Name or description" value={q} onChange={(e) => reset(setQ)(e.target.value)} />
          </div>
          <div className="space-y-1">
            <Label htmlFor="datasets-kind">Kind</Label>
            <Select id="datasets-kind" value={kind} onChange={(e) => reset(setKind)(e.target.value)}>
              <option value="">All kinds</option>
              {DATASET_KINDS.map((k) => (
                <option key={k} value={k}>
                  {KIND_LABELS[k]}
                </option>
              ))}
            </Select>
          </div>
          <div className="w-40 space-y-1">
            <Label htmlFor="datasets-tag">Tag</Label>
            <Input id="datasets-tag" placeholder="Any tag" list="datasets-tag-options" value={tag} onChange={(e) => reset(setTag)(e.target.value)} />
            <datalist id="datasets-tag-options">
              {(tags.data ?? []).map((t) => (
                <option key={t.tag} value={t.tag} />
              ))}
            </datalist>
          </div>
          <div className="space-y-1">
            <Label htmlFor="datasets-difficulty">Difficulty</Label>
            <Select id="datasets-difficulty" value={difficulty} onChange={(e) => reset(setDifficulty)(e.target.value)}>
              <option value="">Any difficulty</option>
              {DIFFICULTIES.map((x) => (
                <option key={x} value={x}>
                  Has {x} cases
                </option>
              ))}
            </Select>
          </div>
          <div className="flex h-10 items-center gap-2">
            <Checkbox id="datasets-archived" checked={includeArchived} onChange={(e) => reset(setIncludeArchived)(e.target.checked)} />
            <Label htmlFor="datasets-archived" className="font-normal">
              Show archived
            </Label>
          </div>
        </div>
        {list.isPending ? (
          <LoadingRows label="Loading datasets" />
        ) : list.isError ? (
          <ErrorState title="Could not load datasets" error={list.error} onRetry={() => list.refetch()} retrying={list.isFetching} />
        ) : items.length === 0 ? (
          filtered ? (
            <EmptyState title="No matching datasets" description="Try another search, kind, tag or difficulty." />
          ) : (
            <EmptyState
              title="Import or generate your first dataset"
              description={canEdit ? 'Create a dataset, then import a CSV or JSONL file, add cases by hand, or generate them with a model.' : 'Editors of this project create datasets.'}
              action={newButton}
            />
          )
        ) : (
          <>
            <Table aria-label="Datasets" aria-busy={list.isFetching || undefined}>
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Kind</TH>
                  <TH className="text-right">Cases</TH>
                  <TH className="text-right">Version</TH>
                  <TH>Created</TH>
                </TR>
              </THead>
              <TBody>
                {items.map((d) => (
                  <TR key={d.id} className={d.archived_at ? 'bg-zinc-50' : undefined}>
                    <TD className="min-w-48">
                      <Link to={`/projects/${projectId}/datasets/${d.id}`} className={cn('rounded-xl font-medium text-indigo-700 hover:underline', focusRing)}>
                        {d.name}
                      </Link>
                      {d.archived_at && (
                        <Badge tone="neutral" className="ml-2">
                          Archived
                        </Badge>
                      )}
                      {d.description && <div className="text-sm text-zinc-500">{d.description}</div>}
                      {(d.tags ?? []).length > 0 && (
                        <div role="group" className="mt-1 flex flex-wrap gap-1" aria-label={`Tags of ${d.name}`}>
                          {d.tags.map((t) => (
                            <button key={t} type="button" onClick={() => reset(setTag)(t)} title={`Show datasets tagged ${t}`} className={cn('rounded-xl border border-zinc-200 bg-zinc-50 px-2 text-sm text-zinc-700 hover:bg-zinc-100', focusRing)}>
                              {t}
                            </button>
                          ))}
                        </div>
                      )}
                    </TD>
                    <TD>
                      <Badge tone="indigo">{KIND_LABELS[d.kind] ?? d.kind}</Badge>
                      {d.split && <span className="ml-2 text-sm text-zinc-500">{d.split}</span>}
                    </TD>
                    <TD className="text-right tabular-nums">{d.case_count.toLocaleString('en-US')}</TD>
                    <TD className="text-right tabular-nums">v{d.version}</TD>
                    <TD className="whitespace-nowrap text-zinc-600">{d.created_at ? relativeTime(d.created_at) : ''}</TD>
                  </TR>
                ))}
              </TBody>
            </Table>
            {pages > 1 && (
              <Pager label="Datasets pages" page={page} pageCount={pages} onPage={setPage} />
            )}
          </>
        )}
        <GenerationJobs projectId={projectId} canEdit={canEdit} onOpen={(j) => setGenerating({ kind: j.kind, jobId: j.id })} />
      </CardContent>
      <CreateDatasetDialog projectId={projectId} open={creating} onClose={() => setCreating(false)} />
      <TagManagerDialog projectId={projectId} open={managingTags} onClose={() => setManagingTags(false)} />
      {generating && (
        <GenerateDialog
          key={`${generating.kind}-${generating.jobId ?? 'new'}`}
          projectId={projectId}
          kind={generating.kind}
          initialJobId={generating.jobId}
          open
          onClose={() => setGenerating(null)}
        />
      )}
    </Card>
  );
}
