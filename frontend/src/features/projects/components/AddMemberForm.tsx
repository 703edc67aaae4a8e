import { useState, type FormEvent } from 'react';
import { Alert, Button, Input, Label, Select } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError } from '@/api/errors';
import { ROLES, type Role } from '@/api/types';
import { useCreateInvite } from '../hooks/useInvites';
import { useAddMember } from '../hooks/useMembers';
import { roleLabel } from './RoleBadge';

export function AddMemberForm({ projectId, callerRole }: { projectId: number; callerRole: Role }) {
  const add = useAddMember(projectId);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [problem, setProblem] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  // An email nobody registered: offered as an invite instead.
  const [unregistered, setUnregistered] = useState<{ email: string; role: Role } | null>(null);
  const invite = useCreateInvite(projectId);
  // Only an owner can make someone an owner.
  const roles = ROLES.filter((r) => r !== 'owner' || callerRole === 'owner');

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setAdded(null);
    setUnregistered(null);
    if (!email.trim()) return setProblem('Enter the email of a registered user.');
    setProblem(null);
    add.mutate(
      { email: email.trim(), role },
      {
        onSuccess: (m) => {
          setAdded(`${m.email} was added as ${roleLabel[m.role].toLowerCase()}.`);
          setEmail('');
          setRole('viewer');
        },
        onError: (err) => {
          if (isApiError(err) && err.code === 'USER_NOT_FOUND') return setUnregistered({ email: email.trim(), role });
          const f = fieldErrors(err);
          setProblem(f.email ?? f.role ?? errorMessage(err));
        },
      },
    );
  }

  function sendInvite() {
    if (!unregistered) return;
    invite.mutate(unregistered, {
      onSuccess: (i) => {
        setUnregistered(null);
        setAdded(`${i.email} is invited as ${roleLabel[i.role].toLowerCase()}: they join when they register with that email.`);
        setEmail('');
        setRole('viewer');
      },
      onError: (err) => {
        setUnregistered(null);
        const f = fieldErrors(err);
        setProblem(f.email ?? errorMessage(err));
      },
    });
  }

  return (
    <form noValidate onSubmit={onSubmit} aria-label="Add member" className="space-y-3 border-t border-zinc-200 pt-4">
      <p className="text-sm font-medium">Add a member</p>
      {problem && <Alert>{problem}</Alert>}
      {added && <Alert tone="success">{added}</Alert>}
      {unregistered && (
        <Alert tone="info">
          <div className="flex flex-wrap items-center gap-3">
            <span>
              Nobody has registered with {unregistered.email} yet. Invite them as {roleLabel[unregistered.role].toLowerCase()}?
            </span>
            <Button type="button" size="sm" onClick={sendInvite} loading={invite.isPending}>
              Invite {unregistered.email}
            </Button>
          </div>
        </Alert>
      )}
      <div className="flex flex-wrap items-end gap-3">
        <div className="min-w-64 flex-1 space-y-2">
          <Label htmlFor="member-email">Member email</Label>
          <Input
            id="member-email"
            type="email"
            autoComplete="off"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            invalid={!!problem}
          />
        </div>
        <div className="space-y-2">
          <Label htmlFor="member-role">Member role</Label>
          <Select id="member-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {roleLabel[r]}
              </option>
            ))}
          </Select>
        </div>
        <Button type="submit" loading={add.isPending}>
          Add member
        </Button>
      </div>
    </form>
  );
}
