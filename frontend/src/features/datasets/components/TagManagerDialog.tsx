import { useState } from 'react';
import { Alert, Button, Dialog, EmptyState, ErrorState, Input, LoadingRows } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { useProjectTags, useRemoveTag, useRenameTag } from '../hooks/useDatasets';

/** The project's dataset tags with how many datasets carry each; rename or remove one on every dataset. */
export function TagManagerDialog({ projectId, open, onClose }: { projectId: number; open: boolean; onClose: () => void }) {
  const tags = useProjectTags(projectId);
  const rename = useRenameTag(projectId);
  const remove = useRemoveTag(projectId);
  const [editing, setEditing] = useState<{ from: string; to: string } | null>(null);
  const [removing, setRemoving] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const fail = (e: unknown) => setError(errorMessage(e));
  function saveRename() {
    if (!editing) return;
    const to = editing.to.trim();
    if (!to) return setError('Enter the new name');
    if (to.length > 50) return setError('At most 50 characters');
    setError(null);
    rename.mutate({ from: editing.from, to }, {
      onSuccess: (r) => {
        setDone(`Renamed “${editing.from}” to “${to}” on ${r.datasets} dataset${r.datasets === 1 ? '' : 's'}.`);
        setEditing(null);
      },
      onError: fail,
    });
  }
  function confirmRemove(tag: string) {
    setError(null);
    remove.mutate(tag, {
      onSuccess: (r) => {
        setDone(`Removed “${tag}” from ${r.datasets} dataset${r.datasets === 1 ? '' : 's'}.`);
        setRemoving(null);
      },
      onError: fail,
    });
  }

  const items = tags.data ?? [];
  return (
    <Dialog open={open} onClose={onClose} title="Dataset tags" description="Renaming or removing a tag changes every dataset of the project that has it.">
      <div className="space-y-3">
        {error && <Alert>{error}</Alert>}
        {done && <Alert tone="info">{done}</Alert>}
        {tags.isPending ? (
          <LoadingRows label="Loading tags" rows={3} />
        ) : tags.isError ? (
          <ErrorState title="Could not load the tags" error={tags.error} onRetry={() => tags.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState title="No tags yet" description="Tag a dataset on its page; its tags show here." />
        ) : (
          <ul className="divide-y divide-zinc-200" aria-label="Tags">
            {items.map((t) => (
              <li key={t.tag} className="flex flex-wrap items-center gap-2 py-2">
                {editing?.from === t.tag ? (
                  <form className="flex flex-1 flex-wrap items-center gap-2" noValidate onSubmit={(e) => { e.preventDefault(); saveRename(); }}>
                    <Input aria-label={`New name for ${t.tag}`} className="h-8 min-w-32 flex-1" value={editing.to} onChange={(e) => setEditing({ from: t.tag, to: e.target.value })} autoFocus />
                    <Button type="submit" size="sm" loading={rename.isPending}>
                      Save
                    </Button>
                    <Button size="sm" variant="ghost" onClick={() => setEditing(null)}>
                      Cancel
                    </Button>
                  </form>
                ) : (
                  <>
                    <span className="font-medium text-zinc-900">{t.tag}</span>
                    <span className="text-sm text-zinc-600">
                      {t.count} dataset{t.count === 1 ? '' : 's'}
                    </span>
                    <span className="ml-auto flex gap-1">
                      {removing === t.tag ? (
                        <>
                          <Button size="sm" variant="danger" loading={remove.isPending} onClick={() => confirmRemove(t.tag)}>
                            Remove from {t.count}
                          </Button>
                          <Button size="sm" variant="ghost" onClick={() => setRemoving(null)}>
                            Keep
                          </Button>
                        </>
                      ) : (
                        <>
                          <Button size="sm" variant="secondary" aria-label={`Rename ${t.tag}`} onClick={() => { setDone(null); setEditing({ from: t.tag, to: t.tag }); }}>
                            Rename
                          </Button>
                          <Button size="sm" variant="ghost" aria-label={`Remove ${t.tag}`} onClick={() => { setDone(null); setRemoving(t.tag); }}>
                            Remove
                          </Button>
                        </>
                      )}
                    </span>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
    </Dialog>
  );
}
