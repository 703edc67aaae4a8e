import { useState } from 'react';
import { Alert, Button, Card, CardContent, CardHeader, CardTitle, Dialog, EmptyState, ErrorState, LoadingRows, Select, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage, isStaleWrite } from '@/api/errors';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { useQueryClient } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import { roleAtLeast, ROLES, type Member, type Role } from '@/api/types';
import { relativeTime } from '@/lib/format';
import { useMembers, useRemoveMember, useUpdateMember } from '../hooks/useMembers';
import { AddMemberForm } from './AddMemberForm';
import { RoleBadge, roleLabel } from './RoleBadge';

export function MembersSection({ projectId, role, meId }: { projectId: number; role: Role; meId?: number }) {
  const members = useMembers(projectId);
  const update = useUpdateMember(projectId);
  const remove = useRemoveMember(projectId);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const queryClient = useQueryClient();
  const canManage = roleAtLeast(role, 'admin');

  function changeRole(m: Member, next: Role, version: number | null = m.row_version) {
    setProblem(null);
    update.mutate({ userId: m.user_id, role: next, version: version ?? undefined }, { onError: (e) => !isStaleWrite(e) && setProblem(errorMessage(e)) });
  }
  const stale = isStaleWrite(update.error) ? update.error : null;
  const refused = stale ? update.variables : undefined;
  const refusedMember = refused && members.data?.items.find((m) => m.user_id === refused.userId);

  function confirmRemove() {
    if (!removing) return;
    const target = removing;
    setProblem(null);
    remove.mutate(target.user_id, {
      onSuccess: () => setRemoving(null),
      onError: (e) => {
        setRemoving(null);
        setProblem(errorMessage(e));
      },
    });
  }

  return (
    <Card aria-labelledby="members-heading">
      <CardHeader>
        <CardTitle id="members-heading">Members</CardTitle>
        {members.data && <span className="text-sm text-zinc-500">{members.data.total} total</span>}
      </CardHeader>
      <CardContent className="space-y-4">
        {problem && <Alert>{problem}</Alert>}
        <StaleWriteNotice
          error={update.error}
          edit={refused ? `${refusedMember ? refusedMember.email : 'Member'}: ${roleLabel[refused.role]}` : undefined}
          onReload={() => {
            update.reset();
            void queryClient.invalidateQueries({ queryKey: qk.membersAll(projectId) });
          }}
          onKeepMine={refused && refusedMember && stale ? () => changeRole(refusedMember, refused.role, stale.currentVersion) : undefined}
          keeping={update.isPending}
        />
        {members.isPending ? (
          <LoadingRows label="Loading members" />
        ) : members.isError ? (
          <ErrorState title="Could not load members" error={members.error} onRetry={() => members.refetch()} retrying={members.isFetching} />
        ) : members.data.items.length === 0 ? (
          <EmptyState title="No members" />
        ) : (
          <Table aria-label="Members">
            <THead>
              <TR>
                <TH>Member</TH>
                <TH>Role</TH>
                <TH>Added</TH>
                {canManage && (
                  <TH>
                    <span className="sr-only">Actions</span>
                  </TH>
                )}
              </TR>
            </THead>
            <TBody>
              {members.data.items.map((m) => (
                <TR key={m.user_id}>
                  <TD>
                    <div className="font-medium">{m.name || m.email}</div>
                    {m.name && <div className="text-sm text-zinc-500">{m.email}</div>}
                    {m.user_id === meId && <div className="text-sm text-zinc-500">You</div>}
                  </TD>
                  <TD>
                    {canManage ? (
                      <Select
                        controlSize="sm"
                        aria-label={`Role for ${m.email}`}
                        value={m.role}
                        disabled={update.isPending && update.variables?.userId === m.user_id}
                        onChange={(e) => changeRole(m, e.target.value as Role)}
                      >
                        {ROLES.filter((r) => r !== 'owner' || role === 'owner' || m.role === 'owner').map((r) => (
                          <option key={r} value={r}>
                            {roleLabel[r]}
                          </option>
                        ))}
                      </Select>
                    ) : (
                      <RoleBadge role={m.role} />
                    )}
                  </TD>
                  <TD className="text-zinc-600">{relativeTime(m.created_at)}</TD>
                  {canManage && (
                    <TD className="text-right">
                      <Button variant="danger" size="sm" aria-label={`Remove ${m.email}`} onClick={() => setRemoving(m)}>
                        Remove
                      </Button>
                    </TD>
                  )}
                </TR>
              ))}
            </TBody>
          </Table>
        )}
        {canManage && <AddMemberForm projectId={projectId} callerRole={role} />}
      </CardContent>
      <Dialog
        open={!!removing}
        onClose={() => setRemoving(null)}
        title="Remove member"
        description={removing ? `${removing.email} will lose access to this project.` : undefined}
        footer={
          <>
            <Button variant="secondary" onClick={() => setRemoving(null)}>
              Cancel
            </Button>
            <Button variant="danger" onClick={confirmRemove} loading={remove.isPending}>
              Remove member
            </Button>
          </>
        }
      />
    </Card>
  );
}
