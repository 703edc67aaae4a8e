import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Alert, Badge, Button, Card, CardContent, CardHeader, CardTitle, Checkbox, Dialog, EmptyState, ErrorState, Label, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage, isApiError } from '@/api/errors';
import type { ModelConfig } from '@/api/providerTypes';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { useProviderKinds } from '@/features/providers/hooks/useCredentials';
import { shortKindLabel } from '@/features/providers/kinds';
import { focusRing } from '@/lib/cn';
import { absoluteTime } from '@/lib/format';
import { formatPricePerMtok } from '@/lib/money';
import { ModelFormDialog } from '../components/ModelFormDialog';
import { useArchiveModel, useDeleteModel, useModelConfigs } from '../hooks/useModelConfigs';

const isUnpriced = (m: ModelConfig) =>
  m.priced === false || m.input_price_per_mtok_micros === null || m.output_price_per_mtok_micros === null;

/** The project's model configurations: editors and above manage them. */
export function ModelsPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const canManage = roleAtLeast(project.role, 'editor');
  const [showArchived, setShowArchived] = useState(false);
  const models = useModelConfigs(projectId, showArchived);
  const kinds = useProviderKinds();
  const archive = useArchiveModel(projectId);
  const remove = useDeleteModel(projectId);
  const [dialog, setDialog] = useState<{ editing: ModelConfig | null } | null>(null);
  const [deleting, setDeleting] = useState<ModelConfig | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  function toggleArchive(m: ModelConfig, next: boolean) {
    setProblem(null);
    archive.mutate({ id: m.id, archive: next }, { onError: (e) => setProblem(errorMessage(e)) });
  }

  function closeDelete() {
    setDeleting(null);
    remove.reset();
  }

  function archiveInstead() {
    if (!deleting) return;
    archive.mutate(
      { id: deleting.id, archive: true },
      { onSuccess: closeDelete, onError: (e) => setProblem(errorMessage(e)) },
    );
  }

  const inUse = remove.isError && isApiError(remove.error) && remove.error.status === 409;
  const addButton = canManage && <Button onClick={() => setDialog({ editing: null })}>Add model</Button>;
  const items = models.data?.items ?? [];

  return (
    <Card aria-labelledby="models-heading">
      <CardHeader className="flex-wrap">
        <div className="min-w-64 flex-1 space-y-1">
          <CardTitle id="models-heading">Models</CardTitle>
          <p className="text-sm text-zinc-600">
            Provider models with their prices per million tokens and default parameters. Models used by past runs are
            archived, never deleted.
          </p>
        </div>
        <div className="flex shrink-0 items-center gap-4">
          <div className="flex items-center gap-2">
            <Checkbox id="models-show-archived" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
            <Label htmlFor="models-show-archived" className="font-normal">
              Show archived
            </Label>
          </div>
          {items.length > 0 && addButton}
        </div>
      </CardHeader>
      <CardContent className="space-y-3">
        {problem && <Alert>{problem}</Alert>}
        {models.isPending ? (
          <LoadingRows label="Loading models" />
        ) : models.isError ? (
          <ErrorState title="Could not load models" error={models.error} onRetry={() => models.refetch()} retrying={models.isFetching} />
        ) : items.length === 0 ? (
          <EmptyState
            title={showArchived ? 'No models' : 'No models yet'}
            description={
              canManage ? (
                <>
                  A model names a provider’s model id, its prices and default parameters. It needs a{' '}
                  <Link to={`/projects/${projectId}/providers`} className={`rounded-xl text-indigo-700 underline ${focusRing}`}>
                    provider
                  </Link>{' '}
                  first.
                </>
              ) : (
                'Editors of this project add models.'
              )
            }
            action={addButton}
          />
        ) : (
          <Table aria-label="Models">
            <THead>
              <TR>
                <TH>Name</TH>
                <TH>Provider</TH>
                <TH>Model id</TH>
                <TH className="text-right">Input / 1M</TH>
                <TH className="text-right">Output / 1M</TH>
                <TH className="text-right">Context</TH>
                <TH>Status</TH>
                {canManage && (
                  <TH>
                    <span className="sr-only">Actions</span>
                  </TH>
                )}
              </TR>
            </THead>
            <TBody>
              {items.map((m) => (
                <TR key={m.id} className={m.archived_at ? 'bg-zinc-50' : undefined}>
                  <TD className="min-w-32 font-medium">{m.name}</TD>
                  <TD>
                    <div>{m.credential_label}</div>
                    <div className="whitespace-nowrap text-sm text-zinc-500">{shortKindLabel(kinds.data, m.provider)}</div>
                  </TD>
                  <TD className="min-w-32 break-words font-mono text-sm">{m.model}</TD>
                  <TD className="text-right tabular-nums">{formatPricePerMtok(m.input_price_per_mtok_micros)}</TD>
                  <TD className="text-right tabular-nums">{formatPricePerMtok(m.output_price_per_mtok_micros)}</TD>
                  <TD className="text-right tabular-nums">{m.context_window == null ? '—' : m.context_window.toLocaleString('en-US')}</TD>
                  <TD>
                    <div className="flex flex-wrap gap-1">
                      {m.archived_at ? (
                        <Badge tone="neutral" title={`Archived ${absoluteTime(m.archived_at)}`}>
                          Archived
                        </Badge>
                      ) : (
                        <Badge tone="success">Active</Badge>
                      )}
                      {isUnpriced(m) && (
                        <Badge tone="warning" title="No price set: its cost is unknown, not zero.">
                          Unpriced
                        </Badge>
                      )}
                    </div>
                  </TD>
                  {canManage && (
                    <TD>
                      <div className="flex justify-end gap-2">
                        <Button variant="ghost" size="sm" aria-label={`Edit ${m.name}`} onClick={() => setDialog({ editing: m })}>
                          Edit
                        </Button>
                        {m.archived_at ? (
                          <Button
                            variant="secondary"
                            size="sm"
                            aria-label={`Restore ${m.name}`}
                            loading={archive.isPending && archive.variables?.id === m.id}
                            onClick={() => toggleArchive(m, false)}
                          >
                            Restore
                          </Button>
                        ) : (
                          <Button
                            variant="secondary"
                            size="sm"
                            aria-label={`Archive ${m.name}`}
                            loading={archive.isPending && archive.variables?.id === m.id}
                            onClick={() => toggleArchive(m, true)}
                          >
                            Archive
                          </Button>
                        )}
                        <Button variant="danger" size="sm" aria-label={`Delete ${m.name}`} onClick={() => setDeleting(m)}>
                          Delete
                        </Button>
                      </div>
                    </TD>
                  )}
                </TR>
              ))}
            </TBody>
          </Table>
        )}
      </CardContent>
      <ModelFormDialog projectId={projectId} open={!!dialog} editing={dialog?.editing ?? null} onClose={() => setDialog(null)} />
      <Dialog
        open={!!deleting}
        onClose={closeDelete}
        title="Delete model"
        description={deleting ? `“${deleting.name}” will be removed for good.` : undefined}
        footer={
          <>
            <Button variant="secondary" onClick={closeDelete}>
              {remove.isError ? 'Close' : 'Cancel'}
            </Button>
            {inUse && deleting && !deleting.archived_at ? (
              <Button onClick={archiveInstead} loading={archive.isPending}>
                Archive instead
              </Button>
            ) : (
              !remove.isError && (
                <Button variant="danger" loading={remove.isPending} onClick={() => deleting && remove.mutate(deleting.id, { onSuccess: closeDelete })}>
                  Delete model
                </Button>
              )
            )}
          </>
        }
      >
        {remove.isError && <Alert>{errorMessage(remove.error)}</Alert>}
      </Dialog>
    </Card>
  );
}
