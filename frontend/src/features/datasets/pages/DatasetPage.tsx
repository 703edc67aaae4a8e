import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, Badge, Button, buttonClasses, Card, CardContent, CardHeader, CardTitle, Dialog, EmptyState, ErrorState, Input, Label, LoadingRows, Select } from '@/components/ui';
import { errorMessage, isApiError } from '@/api/errors';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { cn, focusRing } from '@/lib/cn';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { DIFFICULTIES, exportUrl, KIND_LABELS, type Case } from '../api';
import { CaseDialog } from '../components/CaseDialog';
import { CasesTable } from '../components/CasesTable';
import { CoverageChart } from '../components/CoverageChart';
import { DatasetTags } from '../components/DatasetTags';
import { OriginPanel } from '../components/OriginPanel';
import { EditDatasetDialog } from '../components/EditDatasetDialog';
import { ImportWizard } from '../components/ImportWizard';
import { VersionsPanel } from '../components/VersionsPanel';
import { useArchiveDataset, useDataset, useDeleteCase, useDeleteDataset } from '../hooks/useDatasets';
import { JudgeConfigDialog } from '@/features/judgments/components/JudgeConfigDialog';
import { JudgingsList } from '@/features/judgments/components/JudgingsList';

type Section = 'cases' | 'versions' | 'coverage' | 'judgments' | 'origin';
const SECTIONS: Array<{ key: Section; label: string }> = [
  { key: 'cases', label: 'Cases' },
  { key: 'versions', label: 'Versions' },
  { key: 'coverage', label: 'Coverage' },
  { key: 'judgments', label: 'Judgments' },
  { key: 'origin', label: 'Origin' },
];

/** One dataset: its cases (virtualised), version history with diffs, coverage, import and export. */
export function DatasetPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const datasetId = Number(useParams().datasetId);
  const navigate = useNavigate();
  const canEdit = roleAtLeast(project.role, 'editor');
  const dataset = useDataset(projectId, datasetId);
  const archive = useArchiveDataset(projectId);
  const remove = useDeleteDataset(projectId);
  const deleteCase = useDeleteCase(projectId, datasetId);
  const [section, setSection] = useState<Section>('cases');
  const [q, setQ] = useState('');
  const [tag, setTag] = useState('');
  const [difficulty, setDifficulty] = useState('');
  const [viewVersion, setViewVersion] = useState<number | null>(null);
  const [caseDialog, setCaseDialog] = useState<{ editing: Case | null } | null>(null);
  const [deletingCase, setDeletingCase] = useState<Case | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [importing, setImporting] = useState(false);
  const [editingDetails, setEditingDetails] = useState(false);
  const [judging, setJudging] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const debouncedQ = useDebouncedValue(q, 300);
  const debouncedTag = useDebouncedValue(tag, 300);

  if (!Number.isFinite(datasetId) || (dataset.isError && isApiError(dataset.error) && dataset.error.status === 404)) {
    return (
      <EmptyState
        title="Dataset not found"
        description="It does not exist in this project."
        action={
          <Link to={`/projects/${projectId}/datasets`} className={buttonClasses('secondary')}>
            Back to datasets
          </Link>
        }
      />
    );
  }
  if (dataset.isPending) return <LoadingRows label="Loading the dataset" rows={4} />;
  if (dataset.isError) return <ErrorState title="Could not load the dataset" error={dataset.error} onRetry={() => dataset.refetch()} retrying={dataset.isFetching} />;

  const d = dataset.data;
  const oldVersion = viewVersion !== null && viewVersion !== d.version ? viewVersion : null;
  const filters = { q: debouncedQ, tag: debouncedTag, difficulty, ...(oldVersion !== null ? { version: oldVersion } : {}) };
  const canEditCases = canEdit && oldVersion === null;
  const inUse = remove.isError && isApiError(remove.error) && remove.error.status === 409;

  function closeDelete() {
    setDeleting(false);
    remove.reset();
  }

  return (
    <div className="space-y-4">
      <Card aria-labelledby="dataset-heading">
        <CardHeader className="flex-wrap">
          <div className="min-w-64 flex-1 space-y-2">
            <nav aria-label="Dataset breadcrumb" className="text-sm text-zinc-500">
              <Link to={`/projects/${projectId}/datasets`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
                Datasets
              </Link>{' '}
              / <span className="text-zinc-900">{d.name}</span>
            </nav>
            <div className="flex flex-wrap items-center gap-2">
              <CardTitle id="dataset-heading" className="text-xl">
                {d.name}
              </CardTitle>
              <Badge tone="indigo">{KIND_LABELS[d.kind] ?? d.kind}</Badge>
              <Badge tone="neutral">v{d.version}</Badge>
              {d.archived_at && <Badge tone="warning">Archived</Badge>}
            </div>
            <p className="text-sm text-zinc-600" data-testid="dataset-summary">
              {d.case_count.toLocaleString('en-US')} case{d.case_count === 1 ? '' : 's'} in version {d.version}
              {d.split ? ` · ${d.split} split` : ''}
            </p>
            {d.description && <p className="text-base text-zinc-700">{d.description}</p>}
            <DatasetTags projectId={projectId} dataset={d} canEdit={canEdit} />
          </div>
          <div className="flex flex-wrap items-center gap-2">
            {(['csv', 'jsonl'] as const).map((f) => (
              // a plain link: the server streams the file and names it; the session cookie authenticates it
              <a key={f} href={exportUrl(projectId, datasetId, f)} download className={buttonClasses('secondary', 'sm')}>
                Export {f.toUpperCase()}
              </a>
            ))}
            {canEdit && (
              <>
                {d.case_count > 0 && (
                  <Button variant="secondary" size="sm" onClick={() => setJudging(true)}>
                    Judge questions
                  </Button>
                )}
                <Button variant="secondary" size="sm" onClick={() => setEditingDetails(true)}>
                  Edit details
                </Button>
                <Button
                  variant="secondary"
                  size="sm"
                  loading={archive.isPending}
                  onClick={() => {
                    setProblem(null);
                    archive.mutate({ id: d.id, archive: !d.archived_at }, { onError: (e) => setProblem(errorMessage(e)) });
                  }}
                >
                  {d.archived_at ? 'Restore' : 'Archive'}
                </Button>
                <Button variant="danger" size="sm" onClick={() => setDeleting(true)}>
                  Delete
                </Button>
              </>
            )}
          </div>
        </CardHeader>
        <CardContent className="space-y-4">
          {problem && <Alert>{problem}</Alert>}
          <div role="group" aria-label="Dataset sections" className="flex gap-1 overflow-x-auto border-b border-zinc-200">
            {SECTIONS.map((s) => (
              <button
                key={s.key}
                type="button"
                aria-pressed={section === s.key}
                onClick={() => setSection(s.key)}
                className={cn(
                  '-mb-px inline-flex h-10 items-center rounded-t-xl border-b-2 px-3 text-sm',
                  section === s.key ? 'border-indigo-600 font-medium text-zinc-900' : 'border-transparent text-zinc-600 hover:text-zinc-900',
                  focusRing,
                )}
              >
                {s.label}
              </button>
            ))}
          </div>
          {section === 'cases' && (
            <div className="space-y-3">
              <div className="flex flex-wrap items-end gap-3">
                <div className="min-w-48 flex-1 space-y-1">
                  <Label htmlFor="cases-q">Search cases</Label>
                  <Input id="cases-q" type="search" placeholder="Text in input or expected" value={q} onChange={(e) => setQ(e.target.value)} />
                </div>
                <div className="w-40 space-y-1">
                  <Label htmlFor="cases-tag">Tag</Label>
                  <Input id="cases-tag" placeholder="Any tag" value={tag} onChange={(e) => setTag(e.target.value)} />
                </div>
                <div className="space-y-1">
                  <Label htmlFor="cases-difficulty">Difficulty</Label>
                  <Select id="cases-difficulty" value={difficulty} onChange={(e) => setDifficulty(e.target.value)}>
                    <option value="">Any difficulty</option>
                    {DIFFICULTIES.map((x) => (
                      <option key={x} value={x}>
                        {x}
                      </option>
                    ))}
                  </Select>
                </div>
                {canEditCases && (
                  <div className="flex gap-2">
                    <Button variant="secondary" onClick={() => setImporting(true)}>
                      Import
                    </Button>
                    <Button onClick={() => setCaseDialog({ editing: null })}>Add case</Button>
                  </div>
                )}
              </div>
              {oldVersion !== null && (
                <Alert tone="info" className="flex flex-wrap items-center justify-between gap-2">
                  <span>Viewing version {oldVersion} (read-only). Edits apply to the latest version, v{d.version}.</span>
                  <Button variant="secondary" size="sm" onClick={() => setViewVersion(null)}>
                    Back to the latest
                  </Button>
                </Alert>
              )}
              <CasesTable
                projectId={projectId}
                datasetId={datasetId}
                filters={filters}
                canEdit={canEditCases}
                onEdit={(c) => setCaseDialog({ editing: c })}
                onDelete={(c) => setDeletingCase(c)}
              />
            </div>
          )}
          {section === 'versions' && <VersionsPanel
              projectId={projectId}
              datasetId={datasetId}
              current={d.version}
              onView={(v) => {
                setViewVersion(v);
                setSection('cases');
              }}
            />}
          {section === 'coverage' && <CoverageChart projectId={projectId} datasetId={datasetId} />}
          {section === 'judgments' && <JudgingsList projectId={projectId} datasetId={datasetId} />}
          {section === 'origin' && <OriginPanel dataset={d} />}
        </CardContent>
      </Card>
      <CaseDialog projectId={projectId} datasetId={datasetId} kind={d.kind} open={!!caseDialog} editing={caseDialog?.editing ?? null} onClose={() => setCaseDialog(null)} />
      <EditDatasetDialog projectId={projectId} dataset={d} open={editingDetails} onClose={() => setEditingDetails(false)} />
      <JudgeConfigDialog projectId={projectId} datasetId={datasetId} datasetName={d.name} open={judging} onClose={() => setJudging(false)} />
      <ImportWizard projectId={projectId} datasetId={datasetId} kind={d.kind} open={importing} onClose={() => setImporting(false)} />
      <Dialog
        open={!!deletingCase}
        onClose={() => {
          setDeletingCase(null);
          deleteCase.reset();
        }}
        title="Delete case"
        description="The case leaves a new version; earlier versions keep it."
        footer={
          <>
            <Button variant="secondary" onClick={() => setDeletingCase(null)}>
              Cancel
            </Button>
            <Button variant="danger" loading={deleteCase.isPending} onClick={() => deletingCase && deleteCase.mutate(deletingCase.id, { onSuccess: () => setDeletingCase(null) })}>
              Delete case
            </Button>
          </>
        }
      >
        {deleteCase.isError && <Alert>{errorMessage(deleteCase.error)}</Alert>}
      </Dialog>
      <Dialog
        open={deleting}
        onClose={closeDelete}
        title="Delete dataset"
        description={`“${d.name}” and all its versions will be removed for good.`}
        footer={
          <>
            <Button variant="secondary" onClick={closeDelete}>
              {remove.isError ? 'Close' : 'Cancel'}
            </Button>
            {inUse && !d.archived_at ? (
              <Button loading={archive.isPending} onClick={() => archive.mutate({ id: d.id, archive: true }, { onSuccess: closeDelete })}>
                Archive instead
              </Button>
            ) : (
              !remove.isError && (
                <Button variant="danger" loading={remove.isPending} onClick={() => remove.mutate(d.id, { onSuccess: () => navigate(`/projects/${projectId}/datasets`) })}>
                  Delete dataset
                </Button>
              )
            )}
          </>
        }
      >
        {remove.isError && <Alert>{errorMessage(remove.error)}</Alert>}
      </Dialog>
    </div>
  );
}
