import { useState, type FormEvent } from 'react';
import { Badge, Button, Input } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { cn, focusRing } from '@/lib/cn';
import type { Dataset } from '../api';
import { useProjectTags, useUpdateDataset } from '../hooks/useDatasets';

const MAX_TAG = 50;

/** The dataset's own tags; editors add one (the project's tags are suggested) or remove one. */
export function DatasetTags({ projectId, dataset, canEdit }: { projectId: number; dataset: Dataset; canEdit: boolean }) {
  const update = useUpdateDataset(projectId);
  const known = useProjectTags(projectId);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const tags = dataset.tags ?? [];

  const save = (next: string[], after?: () => void) => {
    setError(null);
    update.mutate({ id: dataset.id, body: { tags: next } }, { onSuccess: after, onError: (e) => setError(errorMessage(e)) });
  };
  function onAdd(e: FormEvent) {
    e.preventDefault();
    const tag = text.trim();
    if (!tag) return setError('Enter a tag');
    if (tag.length > MAX_TAG) return setError(`At most ${MAX_TAG} characters`);
    if (tags.includes(tag)) return setError(`Already tagged “${tag}”`);
    save([...tags, tag], () => setText(''));
  }

  if (!canEdit && !tags.length) return null;
  return (
    <div className="flex flex-wrap items-center gap-2" data-testid="dataset-tags">
      <span className="text-sm text-zinc-600">Tags:</span>
      {tags.length === 0 && <span className="text-sm text-zinc-500">none</span>}
      <ul className="flex flex-wrap gap-1" aria-label="Dataset tags">
        {tags.map((t) => (
          <li key={t}>
            <Badge tone="neutral" className="gap-1">
              {t}
              {canEdit && (
                <button type="button" aria-label={`Remove tag ${t}`} disabled={update.isPending} onClick={() => save(tags.filter((x) => x !== t))} className={cn('rounded-xl px-1 text-zinc-500 hover:text-zinc-900', focusRing)}>
                  ×
                </button>
              )}
            </Badge>
          </li>
        ))}
      </ul>
      {canEdit && (
        <form onSubmit={onAdd} className="flex items-center gap-1" noValidate>
          <Input aria-label="New dataset tag" placeholder="Add a tag" list="dataset-tag-options" className="h-8 w-36" value={text} onChange={(e) => { setText(e.target.value); setError(null); }} invalid={!!error} aria-describedby={error ? 'dataset-tag-error' : undefined} />
          <datalist id="dataset-tag-options">
            {(known.data ?? []).filter((t) => !tags.includes(t.tag)).map((t) => (
              <option key={t.tag} value={t.tag} />
            ))}
          </datalist>
          <Button type="submit" size="sm" variant="secondary" loading={update.isPending}>
            Add tag
          </Button>
        </form>
      )}
      {error && (
        <p id="dataset-tag-error" role="alert" className="w-full text-sm text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}
