import { useState, type FormEvent } from 'react';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, Dialog, EmptyState, ErrorState, Field, Input, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { absoluteTime, relativeTime } from '@/lib/format';
import { useCreateToken, useRevokeToken, useTokens } from '../hooks/useTokens';

/** Personal API tokens for programmatic clients (Authorization: Bearer). */
export function TokensPage() {
  const tokens = useTokens();
  const create = useCreateToken();
  const revoke = useRevokeToken();
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<{ id: number; name: string } | null>(null);

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) return setProblem('Give the token a name, such as "CI".');
    setProblem(null);
    create.mutate(name.trim(), {
      onSuccess: (t) => {
        setCreated({ name: t.name, token: t.token });
        setName('');
      },
      onError: (err) => setProblem(fieldErrors(err).name ?? errorMessage(err)),
    });
  }

  return (
    <div className="space-y-6">
      <h1 className="text-xl font-semibold">API tokens</h1>
      <p className="text-base text-zinc-600">
        Scripts and the CLI authenticate with <code className="text-sm">Authorization: Bearer &lt;token&gt;</code>. A
        token acts as you in every project you belong to.
      </p>
      <Card>
        <CardHeader>
          <CardTitle>New token</CardTitle>
        </CardHeader>
        <CardContent>
          <form noValidate onSubmit={onSubmit} className="flex flex-wrap items-end gap-3">
            <div className="min-w-64 flex-1">
              <Field id="token-name" label="Token name" error={problem}>
                <Input id="token-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} invalid={!!problem} />
              </Field>
            </div>
            <Button type="submit" loading={create.isPending}>
              Create token
            </Button>
          </form>
          {created && (
            <Alert tone="success" className="mt-4 space-y-2">
              <p>
                Token “{created.name}” created. Copy it now: it is not shown again.
              </p>
              <code data-testid="new-token" className="block break-all rounded-xl border border-emerald-200 bg-white px-3 py-2 text-sm text-zinc-900">
                {created.token}
              </code>
            </Alert>
          )}
        </CardContent>
      </Card>
      <Card>
        <CardHeader>
          <CardTitle>Your tokens</CardTitle>
        </CardHeader>
        <CardContent>
          {tokens.isPending ? (
            <LoadingRows label="Loading tokens" />
          ) : tokens.isError ? (
            <ErrorState title="Could not load tokens" error={tokens.error} onRetry={() => tokens.refetch()} retrying={tokens.isFetching} />
          ) : tokens.data.items.length === 0 ? (
            <EmptyState title="No tokens" description="Create one above for a script or the CLI." />
          ) : (
            <Table aria-label="API tokens">
              <THead>
                <TR>
                  <TH>Name</TH>
                  <TH>Prefix</TH>
                  <TH>Created</TH>
                  <TH>Last used</TH>
                  <TH>
                    <span className="sr-only">Actions</span>
                  </TH>
                </TR>
              </THead>
              <TBody>
                {tokens.data.items.map((t) => (
                  <TR key={t.id}>
                    <TD className="font-medium">{t.name}</TD>
                    <TD className="font-mono text-zinc-600">{t.prefix}…</TD>
                    <TD className="text-zinc-600" title={absoluteTime(t.created_at)}>
                      {relativeTime(t.created_at)}
                    </TD>
                    <TD className="text-zinc-600">{t.last_used_at ? relativeTime(t.last_used_at) : 'Never'}</TD>
                    <TD className="text-right">
                      <Button variant="danger" size="sm" aria-label={`Revoke ${t.name}`} onClick={() => setRevoking({ id: t.id, name: t.name })}>
                        Revoke
                      </Button>
                    </TD>
                  </TR>
                ))}
              </TBody>
            </Table>
          )}
          {revoke.isError && <Alert className="mt-3">{errorMessage(revoke.error)}</Alert>}
        </CardContent>
      </Card>
      <Dialog
        open={!!revoking}
        onClose={() => setRevoking(null)}
        title="Revoke token"
        description={revoking ? `Clients using “${revoking.name}” will stop working at once.` : undefined}
        footer={
          <>
            <Button variant="secondary" onClick={() => setRevoking(null)}>
              Cancel
            </Button>
            <Button
              variant="danger"
              loading={revoke.isPending}
              onClick={() => revoking && revoke.mutate(revoking.id, { onSettled: () => setRevoking(null) })}
            >
              Revoke token
            </Button>
          </>
        }
      />
    </div>
  );
}
