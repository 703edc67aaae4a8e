import { useEffect, useState } from 'react';
import { useQueries } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import { datasetPath, request, type DatasetVersion, type Page } from '@/features/datasets/api';
import { Link } from 'react-router-dom';
import { Button, Field, Select, Skeleton, buttonClasses } from '@/components/ui';
import { useDatasetList, useVersions } from '@/features/datasets/hooks/useDatasets';
import { ImportWizard } from '@/features/datasets/components/ImportWizard';
import { GenerateDialog } from '@/features/generation/components/GenerateDialog';
import type { StepProps } from './types';

const ALL = { page: 1, q: '', kind: '', tag: '', includeArchived: false };

function VersionPicker({ projectId, datasetId, value, onChange, error }: { projectId: number; datasetId: number; value: number | null; onChange: (id: number) => void; error?: string }) {
  const versions = useVersions(projectId, datasetId);
  if (versions.isPending) return <Skeleton className="h-10 w-full" />;
  const items = versions.data ?? [];
  return (
    <Field id="data-version" label="Version" error={error} hint="Runs pin this version; counterexamples added in review make a newer one.">
      <Select id="data-version" className="w-full" value={value ?? ''} onChange={(e) => onChange(Number(e.target.value))}>
        <option value="" disabled>
          Pick a version
        </option>
        {items.map((v) => (
          <option key={v.id} value={v.id}>
            {`v${v.number} — ${v.case_count} case${v.case_count === 1 ? '' : 's'}${v.note ? ` (${v.note})` : ''}`}
          </option>
        ))}
      </Select>
    </Field>
  );
}

/** FR-EC-004: a dataset version to test on: pick one, import a file into one, or generate one. */
export function DataStep({ projectId, draft, update, errors }: StepProps) {
  const datasets = useDatasetList(projectId, ALL);
  const [importing, setImporting] = useState(false);
  const [generating, setGenerating] = useState(false);
  const chosen = datasets.data?.items.find((d) => d.id === draft.dataset_id);
  // A resumed draft stores only the version: find the dataset that holds it.
  const lookup = draft.dataset_id === null && draft.dataset_version_id !== null ? (datasets.data?.items ?? []) : [];
  const versionLists = useQueries({
    queries: lookup.map((d) => ({
      queryKey: qk.versions(projectId, d.id),
      queryFn: ({ signal }: { signal: AbortSignal }) =>
        request<Page<DatasetVersion> | DatasetVersion[]>('GET', `${datasetPath(projectId, d.id)}/versions`, { query: { page: 1, page_size: 100 }, signal }).then((r) => (Array.isArray(r) ? r : r.items)),
    })),
  });
  const owner = lookup.find((_, i) => versionLists[i]?.data?.some((v) => v.id === draft.dataset_version_id));
  useEffect(() => {
    if (owner && draft.dataset_id === null) update({ dataset_id: owner.id });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [owner?.id]);
  return (
    <div className="space-y-4">
      <p className="text-sm text-zinc-600">
        The cases the prompt is tested on. A share of them is held out: the refiner never sees them, and they decide which version is best.
      </p>
      {datasets.isPending && <Skeleton className="h-10 w-full" />}
      {datasets.data && datasets.data.items.length === 0 && (
        <p className="rounded-xl border border-dashed border-zinc-300 p-3 text-sm text-zinc-600">No datasets yet: generate cases below, or create one on the Datasets tab and import a file.</p>
      )}
      {datasets.data && datasets.data.items.length > 0 && (
        <div className="grid gap-3 sm:grid-cols-2">
          <Field id="data-dataset" label="Dataset" error={!draft.dataset_id ? errors.dataset_version_id : undefined}>
            <Select
              id="data-dataset"
              className="w-full"
              value={draft.dataset_id ?? ''}
              onChange={(e) => {
                const id = Number(e.target.value);
                update({ dataset_id: id, dataset_version_id: null });
              }}
            >
              <option value="" disabled>
                Pick a dataset
              </option>
              {datasets.data.items.map((d) => (
                <option key={d.id} value={d.id}>{`${d.name} (${d.case_count} cases)`}</option>
              ))}
            </Select>
          </Field>
          {draft.dataset_id && (
            <VersionPicker projectId={projectId} datasetId={draft.dataset_id} value={draft.dataset_version_id} onChange={(id) => update({ dataset_version_id: id })} error={errors.dataset_version_id} />
          )}
        </div>
      )}
      <div className="flex flex-wrap gap-2">
        <Button variant="secondary" disabled={!chosen} onClick={() => setImporting(true)} title={chosen ? undefined : 'Pick a dataset to import into'}>
          Import CSV / JSONL into {chosen ? chosen.name : 'the dataset'}
        </Button>
        <Button variant="secondary" onClick={() => setGenerating(true)}>
          Generate cases with AI
        </Button>
        <Link to={`/projects/${projectId}/datasets`} className={buttonClasses('ghost')}>
          Open Datasets
        </Link>
      </div>
      {chosen && <ImportWizard projectId={projectId} datasetId={chosen.id} kind={chosen.kind} open={importing} onClose={() => setImporting(false)} />}
      <GenerateDialog projectId={projectId} kind="cases" open={generating} onClose={() => setGenerating(false)} />
    </div>
  );
}
