import { useState } from 'react';
import { Alert, Badge, Button, Card, CardContent, CardHeader, CardTitle, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { roleAtLeast, type Role } from '@/api/types';
import { absoluteTime, relativeTime } from '@/lib/format';
import { useInvites, useRevokeInvite, type Invite } from '../hooks/useInvites';
import { RoleBadge } from './RoleBadge';

function expiry(i: Invite) {
  return i.expired ? (
    <Badge tone="warning">Expired</Badge>
  ) : (
    <time dateTime={i.expires_at} title={absoluteTime(i.expires_at)}>
      expires {relativeTime(i.expires_at)}
    </time>
  );
}

/** Invites waiting for someone to register with the invited email; admins revoke them. */
export function InvitesSection({ projectId, role }: { projectId: number; role: Role }) {
  const invites = useInvites(projectId);
  const revoke = useRevokeInvite(projectId);
  const [problem, setProblem] = useState<string | null>(null);
  const canManage = roleAtLeast(role, 'admin');
  // Nothing pending: the section stays out of the way (the add form offers invites).
  if (invites.isSuccess && invites.data.items.length === 0) return null;

  return (
    <Card aria-labelledby="invites-heading">
      <CardHeader>
        <CardTitle id="invites-heading">Pending invites</CardTitle>
      </CardHeader>
      <CardContent className="space-y-3">
        {problem && <Alert>{problem}</Alert>}
        {invites.isPending ? (
          <LoadingRows label="Loading invites" />
        ) : invites.isError ? (
          <ErrorState title="Could not load invites" error={invites.error} onRetry={() => invites.refetch()} retrying={invites.isFetching} />
        ) : (
          <Table aria-label="Pending invites">
            <THead>
              <TR>
                <TH>Email</TH>
                <TH className="hidden sm:table-cell">Role</TH>
                <TH className="hidden sm:table-cell">Expires</TH>
                {canManage && (
                  <TH>
                    <span className="sr-only">Actions</span>
                  </TH>
                )}
              </TR>
            </THead>
            <TBody>
              {invites.data.items.map((i) => (
                <TR key={i.id}>
                  <TD>
                    <div className="font-medium [overflow-wrap:anywhere]">{i.email}</div>
                    {/* narrow screens: role and expiry under the email, not in columns */}
                    <div className="mt-1 flex flex-wrap items-center gap-2 text-sm text-zinc-600 sm:hidden">
                      <RoleBadge role={i.role} />
                      {expiry(i)}
                    </div>
                  </TD>
                  <TD className="hidden sm:table-cell">
                    <RoleBadge role={i.role} />
                  </TD>
                  <TD className="hidden text-zinc-600 sm:table-cell">{expiry(i)}</TD>
                  {canManage && (
                    <TD className="text-right">
                      <Button
                        variant="danger"
                        size="sm"
                        aria-label={`Revoke the invite of ${i.email}`}
                        loading={revoke.isPending && revoke.variables === i.id}
                        onClick={() => {
                          setProblem(null);
                          revoke.mutate(i.id, { onError: (e) => setProblem(errorMessage(e)) });
                        }}
                      >
                        Revoke
                      </Button>
                    </TD>
                  )}
                </TR>
              ))}
            </TBody>
          </Table>
        )}
      </CardContent>
    </Card>
  );
}
