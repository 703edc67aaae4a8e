import { Link } from 'react-router-dom';
import { Badge, Button, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { absoluteTime, relativeTime } from '@/lib/format';
import type { PromptDetail, PromptVersion } from '../api';

const link = cn('rounded-xl font-medium text-indigo-700 hover:underline', focusRing);

/** Every version, newest first: changelog, author, date, parent, production marker and actions. */
export function VersionsTable({
  prompt,
  selectedId,
  canEdit,
  hrefOf,
  onEdit,
  onProduction,
  marking,
}: {
  prompt: PromptDetail;
  selectedId: number;
  canEdit: boolean;
  hrefOf: (id: number) => string;
  onEdit: (v: PromptVersion) => void;
  onProduction: (v: PromptVersion) => void;
  marking: number | null;
}) {
  const byId = new Map(prompt.versions.map((v) => [v.id, v]));
  return (
    <Table aria-label="Versions">
      <THead>
        <TR>
          <TH>Version</TH>
          <TH>Changelog</TH>
          <TH>Author</TH>
          <TH>Saved</TH>
          <TH>
            <span className="sr-only">Actions</span>
          </TH>
        </TR>
      </THead>
      <TBody>
        {prompt.versions.map((v) => {
          const parent = v.parent_id !== null ? byId.get(v.parent_id) : undefined;
          const production = v.id === prompt.production_version_id;
          return (
            <TR key={v.id} className={v.id === selectedId ? 'bg-indigo-50/50' : undefined} aria-current={v.id === selectedId || undefined}>
              <TD className="whitespace-nowrap">
                <Link to={hrefOf(v.id)} className={link} aria-label={`Show v${v.number}`}>
                  v{v.number}
                </Link>
                {production && (
                  <Badge tone="success" className="ml-2">
                    Production
                  </Badge>
                )}
                {parent && (
                  <div className="text-sm text-zinc-500">
                    from{' '}
                    <Link to={hrefOf(parent.id)} className={link}>
                      v{parent.number}
                    </Link>
                  </div>
                )}
              </TD>
              <TD className="min-w-48">{v.note ?? <span className="text-zinc-500">No changelog</span>}</TD>
              <TD className="text-zinc-700">{v.author ?? <span className="text-zinc-500">Unknown</span>}</TD>
              <TD className="whitespace-nowrap text-zinc-600" title={absoluteTime(v.created_at)}>
                {relativeTime(v.created_at)}
              </TD>
              <TD>
                {canEdit && (
                  <div className="flex justify-end gap-2">
                    <Button variant="secondary" size="sm" onClick={() => onEdit(v)} aria-label={`Edit v${v.number}`}>
                      Edit
                    </Button>
                    {!production && (
                      <Button variant="secondary" size="sm" loading={marking === v.id} onClick={() => onProduction(v)} aria-label={`Mark v${v.number} as production`}>
                        Mark production
                      </Button>
                    )}
                  </div>
                )}
              </TD>
            </TR>
          );
        })}
      </TBody>
    </Table>
  );
}
