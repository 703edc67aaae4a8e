import { Link } from 'react-router-dom';
import { ErrorState, LoadingRows } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { absoluteTime } from '@/lib/format';
import { fewShotsText, toolsText, type PromptVersion } from '../api';
import { useLineage } from '../hooks/usePrompts';
import { VariableList } from './VariableList';

const pre = 'max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-zinc-50 p-3 font-mono text-sm text-zinc-900';

function Block({ label, text, empty }: { label: string; text: string; empty: string }) {
  return (
    <div className="space-y-1">
      <h3 className="text-sm font-semibold text-zinc-900">{label}</h3>
      {text ? <pre className={pre}>{text}</pre> : <p className="text-sm text-zinc-500">{empty}</p>}
    </div>
  );
}

/** One version as saved, and the chain of versions it was edited from. */
export function VersionDetails({ projectId, promptId, version, hrefOf }: { projectId: number; promptId: number; version: PromptVersion; hrefOf: (id: number) => string }) {
  const lineage = useLineage(projectId, promptId, version.id);
  return (
    <div className="grid gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]">
      <div className="min-w-0 space-y-3">
        <Block label="Template" text={version.template} empty="" />
        <Block label="System text" text={version.system ?? ''} empty="No system text." />
        <VariableList variables={version.variables} />
        <Block label={`Few-shot examples (${version.few_shots.length})`} text={fewShotsText(version.few_shots)} empty="No examples." />
        <Block label={`Tools (${version.tools.length})`} text={toolsText(version.tools)} empty="No tools." />
      </div>
      <section aria-labelledby="lineage-heading" className="min-w-0 space-y-2">
        <h3 id="lineage-heading" className="text-sm font-semibold text-zinc-900">
          Lineage of v{version.number}
        </h3>
        {lineage.isPending ? (
          <LoadingRows label="Loading lineage" rows={3} />
        ) : lineage.isError ? (
          <ErrorState title="Could not load the lineage" error={lineage.error} onRetry={() => lineage.refetch()} retrying={lineage.isFetching} />
        ) : (
          <ol aria-label="Lineage" className="space-y-2 border-l-2 border-indigo-200 pl-3">
            {lineage.data.items.map((v) => (
              <li key={v.id} className="text-sm">
                <Link to={hrefOf(v.id)} className={cn('rounded-xl font-medium text-indigo-700 hover:underline', focusRing)}>
                  v{v.number}
                </Link>{' '}
                <span className="text-zinc-500">
                  · {v.author ?? 'Unknown'} · {absoluteTime(v.created_at)}
                </span>
                <p className="break-words text-zinc-700">{v.note ?? (v.parent_id === null ? 'First version' : 'No changelog')}</p>
              </li>
            ))}
          </ol>
        )}
      </section>
    </div>
  );
}
