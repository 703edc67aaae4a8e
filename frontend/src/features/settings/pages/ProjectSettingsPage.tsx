import { ErrorState, LoadingRows } from '@/components/ui';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { SettingsFormView } from '../components/SettingsFormView';
import { useProjectSettings } from '../hooks/useSettings';

/** Project settings: name, budget and alert, run defaults, the code-execution opt-in. */
export function ProjectSettingsPage() {
  const { project } = useProjectOutlet();
  const settings = useProjectSettings(project.id);
  if (settings.isPending) return <LoadingRows label="Loading settings" />;
  if (settings.isError) {
    return <ErrorState title="Could not load the settings" error={settings.error} onRetry={() => settings.refetch()} retrying={settings.isFetching} />;
  }
  return <SettingsFormView projectId={project.id} settings={settings.data} />;
}
