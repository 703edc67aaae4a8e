import { Badge } from '@/components/ui';
import type { Role } from '@/api/types';

export const roleLabel: Record<Role, string> = {
  viewer: 'Viewer',
  reviewer: 'Reviewer',
  editor: 'Editor',
  admin: 'Admin',
  owner: 'Owner',
};

export function RoleBadge({ role }: { role: Role }) {
  return <Badge tone={role === 'owner' || role === 'admin' ? 'indigo' : 'neutral'}>{roleLabel[role]}</Badge>;
}
