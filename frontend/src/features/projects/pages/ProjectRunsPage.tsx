import { RunsSection } from '@/features/runs/components/RunsSection';
import { useProjectOutlet } from './ProjectLayout';

/** The project's home: its runs. */
export function ProjectRunsPage() {
  const { project } = useProjectOutlet();
  return <RunsSection projectId={project.id} role={project.role} />;
}
