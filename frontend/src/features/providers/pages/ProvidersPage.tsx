import { useState } from 'react';
import { Alert, Badge, Button, Card, CardContent, CardHeader, CardTitle, Dialog, EmptyState, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { useQueryClient } from '@tanstack/react-query';
import { errorMessage, isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import type { Credential, TestResult } from '@/api/providerTypes';
import { roleAtLeast } from '@/api/types';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { CredentialDialog } from '../components/CredentialDialog';
import { KeyCell, TestStatus } from '../components/TestStatus';
import {
  useCredentials,
  useDeleteCredential,
  useProviderKinds,
  useTestCredential,
  useUpdateCredential,
} from '../hooks/useCredentials';
import { shortKindLabel } from '../kinds';

type InlineTest = { id: number; result?: TestResult; error?: string };

/** Provider credentials of a project: admins and owners manage them, everyone sees them. */
export function ProvidersPage() {
  const { project } = useProjectOutlet();
  const projectId = project.id;
  const canManage = roleAtLeast(project.role, 'admin');
  const credentials = useCredentials(projectId);
  const kinds = useProviderKinds();
  const test = useTestCredential(projectId);
  const update = useUpdateCredential(projectId);
  const remove = useDeleteCredential(projectId);
  const [dialog, setDialog] = useState<{ editing: Credential | null } | null>(null);
  const [deleting, setDeleting] = useState<Credential | null>(null);
  const [inlineTests, setInlineTests] = useState<Record<number, InlineTest>>({});
  const [problem, setProblem] = useState<string | null>(null);

  function runTest(c: Credential) {
    setInlineTests((t) => ({ ...t, [c.id]: { id: c.id } }));
    test.mutate(c.id, {
      onSuccess: (result) => setInlineTests((t) => ({ ...t, [c.id]: { id: c.id, result } })),
      onError: (e) => setInlineTests((t) => ({ ...t, [c.id]: { id: c.id, error: errorMessage(e) } })),
    });
  }

  // Based on the credential's row_version: a change made meanwhile is refused (412), not replaced.
  function setDefault(c: Credential, version: number | null = c.row_version) {
    setProblem(null);
    update.mutate({ id: c.id, body: { is_default: true }, version: version ?? undefined }, { onError: (e) => !isStaleWrite(e) && setProblem(errorMessage(e)) });
  }
  const queryClient = useQueryClient();
  const staleDefault = isStaleWrite(update.error) && update.variables?.body.is_default ? update.error : null;
  const refusedCredential = staleDefault ? credentials.data?.items.find((c) => c.id === update.variables?.id) : undefined;

  function closeDelete() {
    setDeleting(null);
    remove.reset();
  }

  const addButton = canManage && <Button onClick={() => setDialog({ editing: null })}>Add provider</Button>;

  return (
    <Card aria-labelledby="providers-heading">
      <CardHeader className="flex-wrap">
        <div className="min-w-64 flex-1 space-y-1">
          <CardTitle id="providers-heading">Providers</CardTitle>
          <p className="text-sm text-zinc-600">
            Accounts that models call. Keys are encrypted at rest and never shown again, only their last 4 characters.
          </p>
        </div>
        {credentials.data && credentials.data.items.length > 0 && addButton}
      </CardHeader>
      <CardContent className="space-y-3">
        {problem && <Alert>{problem}</Alert>}
        <StaleWriteNotice
          error={staleDefault}
          edit={refusedCredential ? `Default: ${refusedCredential.label}` : undefined}
          onReload={() => {
            update.reset();
            void queryClient.invalidateQueries({ queryKey: qk.credentials(projectId) });
          }}
          onKeepMine={staleDefault && refusedCredential ? () => setDefault(refusedCredential, staleDefault.currentVersion) : undefined}
          keeping={update.isPending}
        />
        {credentials.isPending ? (
          <LoadingRows label="Loading providers" />
        ) : credentials.isError ? (
          <ErrorState
            title="Could not load providers"
            error={credentials.error}
            onRetry={() => credentials.refetch()}
            retrying={credentials.isFetching}
          />
        ) : credentials.data.items.length === 0 ? (
          <EmptyState
            title="No providers yet"
            description={
              canManage
                ? 'Add an OpenAI, Anthropic, Azure OpenAI, OpenRouter, Ollama or OpenAI-compatible account, or Assay’s fake provider for a demo.'
                : 'Admins and owners of this project add providers.'
            }
            action={addButton}
          />
        ) : (
          <Table aria-label="Providers">
            <THead>
              <TR>
                <TH>Label</TH>
                <TH>Provider</TH>
                <TH>Base URL</TH>
                <TH>Key</TH>
                <TH>Last test</TH>
                <TH className="text-right">Models</TH>
                {canManage && (
                  <TH>
                    <span className="sr-only">Actions</span>
                  </TH>
                )}
              </TR>
            </THead>
            <TBody>
              {credentials.data.items.map((c) => {
                const inline = inlineTests[c.id];
                const testing = test.isPending && test.variables === c.id;
                return (
                  <TR key={c.id}>
                    <TD>
                      <div className="flex flex-wrap items-center gap-2">
                        <span className="font-medium">{c.label}</span>
                        {c.is_default && <Badge tone="indigo">Default</Badge>}
                      </div>
                    </TD>
                    <TD className="whitespace-nowrap" title={kinds.data?.find((k) => k.kind === c.kind)?.label}>
                      {shortKindLabel(kinds.data, c.kind)}
                      {c.kind === 'fake' && <div className="text-sm text-zinc-500">Demos and tests only</div>}
                    </TD>
                    <TD className="max-w-56 break-words font-mono text-sm text-zinc-600">{c.base_url || '—'}</TD>
                    <TD>
                      <KeyCell credential={c} />
                    </TD>
                    <TD>
                      <TestStatus credential={c} />
                      <div aria-live="polite" className="mt-1">
                        {inline && !testing && inline.result && (
                          <p className={inline.result.ok ? 'text-sm text-emerald-700' : 'text-sm text-red-700'} data-testid={`test-result-${c.id}`}>
                            {inline.result.ok
                              ? `Connection OK${inline.result.latency_ms != null ? ` (${Math.round(inline.result.latency_ms)} ms)` : ''}`
                              : `Test failed: ${inline.result.error ?? 'unknown error'}`}
                          </p>
                        )}
                        {inline && !testing && inline.error && (
                          <p className="text-sm text-red-700" data-testid={`test-result-${c.id}`}>
                            Could not run the test: {inline.error}
                          </p>
                        )}
                      </div>
                    </TD>
                    <TD className="text-right tabular-nums">{c.model_count}</TD>
                    {canManage && (
                      <TD>
                        <div className="flex justify-end gap-2">
                          <Button variant="secondary" size="sm" aria-label={`Test ${c.label}`} loading={testing} onClick={() => runTest(c)}>
                            Test
                          </Button>
                          {!c.is_default && (
                            <Button
                              variant="ghost"
                              size="sm"
                              aria-label={`Make ${c.label} the default`}
                              loading={update.isPending && update.variables?.id === c.id}
                              onClick={() => setDefault(c)}
                            >
                              Set default
                            </Button>
                          )}
                          <Button variant="ghost" size="sm" aria-label={`Edit ${c.label}`} onClick={() => setDialog({ editing: c })}>
                            Edit
                          </Button>
                          <Button variant="danger" size="sm" aria-label={`Delete ${c.label}`} onClick={() => setDeleting(c)}>
                            Delete
                          </Button>
                        </div>
                      </TD>
                    )}
                  </TR>
                );
              })}
            </TBody>
          </Table>
        )}
      </CardContent>
      <CredentialDialog projectId={projectId} open={!!dialog} editing={dialog?.editing ?? null} onClose={() => setDialog(null)} />
      <Dialog
        open={!!deleting}
        onClose={closeDelete}
        title="Delete provider"
        description={deleting ? `“${deleting.label}” and its stored key will be removed.` : undefined}
        footer={
          <>
            <Button variant="secondary" onClick={closeDelete}>
              {remove.isError ? 'Close' : 'Cancel'}
            </Button>
            {!remove.isError && (
              <Button
                variant="danger"
                loading={remove.isPending}
                onClick={() => deleting && remove.mutate(deleting.id, { onSuccess: closeDelete })}
              >
                Delete provider
              </Button>
            )}
          </>
        }
      >
        {deleting && deleting.model_count > 0 && !remove.isError && (
          <p className="text-sm text-zinc-600">
            {deleting.model_count === 1 ? '1 model uses' : `${deleting.model_count} models use`} it: the server will refuse
            while they do.
          </p>
        )}
        {remove.isError && <Alert>{errorMessage(remove.error)}</Alert>}
      </Dialog>
    </Card>
  );
}
