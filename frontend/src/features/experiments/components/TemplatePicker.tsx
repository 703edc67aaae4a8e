import { Button, Skeleton } from '@/components/ui';
import { useTemplates } from '../hooks/useExperiments';

/** The spec's templates (customer support, creative writing, data extraction, code generation). */
export function TemplatePicker({ projectId, onPick, busyKey }: { projectId: number; onPick: (key: string) => void; busyKey?: string | null }) {
  const templates = useTemplates(projectId);
  return (
    <section aria-label="Templates" className="space-y-2">
      <p className="text-sm font-medium text-zinc-900">Or start from a template (fills objective, rubric, seed prompt and sample cases):</p>
      {templates.isPending && <Skeleton className="h-10 w-full" />}
      {templates.isError && <p className="text-sm text-red-700">Templates could not be loaded.</p>}
      <div className="flex flex-wrap gap-2">
        {templates.data?.map((t) => (
          <Button key={t.slug} variant="secondary" onClick={() => onPick(t.slug)} loading={busyKey === t.slug} title={t.description}>
            {t.name}
          </Button>
        ))}
      </div>
    </section>
  );
}
