import { roleAtLeast } from '@/api/types';
import { useMe } from '@/features/auth/hooks/useAuth';
import { AuditSection } from '../components/AuditSection';
import { InvitesSection } from '../components/InvitesSection';
import { MembersSection } from '../components/MembersSection';
import { useProjectOutlet } from './ProjectLayout';

/** Members and, for admins, the project's activity. */
export function ProjectMembersPage() {
  const { project } = useProjectOutlet();
  const me = useMe();
  return (
    <div className="space-y-6">
      <MembersSection projectId={project.id} role={project.role} meId={me.data?.id} />
      <InvitesSection projectId={project.id} role={project.role} />
      {roleAtLeast(project.role, 'admin') && <AuditSection projectId={project.id} />}
    </div>
  );
}
