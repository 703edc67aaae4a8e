import { useId, useState } from 'react';
import { EmptyState, Select } from '@/components/ui';
import { contentOf, type PromptVersion } from '../api';
import { VersionDiff } from './VersionDiff';

/** Any two versions side by side or unified; starts on the newest against its parent. */
export function ComparePanel({ versions }: { versions: PromptVersion[] }) {
  const id = useId();
  const newest = versions[0];
  const [toId, setToId] = useState<number>(newest.id);
  const [fromId, setFromId] = useState<number>(newest.parent_id ?? versions[1]?.id ?? newest.id);
  if (versions.length < 2) return <EmptyState title="Only one version" description="Edit it into a new version to compare the two." />;
  const from = versions.find((v) => v.id === fromId) ?? versions[1];
  const to = versions.find((v) => v.id === toId) ?? newest;
  const picker = (key: string, label: string, value: number, set: (n: number) => void) => (
    <div className="space-y-1">
      <label htmlFor={`${id}-${key}`} className="block text-sm font-medium text-zinc-900">
        {label}
      </label>
      <Select id={`${id}-${key}`} value={value} onChange={(e) => set(Number(e.target.value))}>
        {versions.map((v) => (
          <option key={v.id} value={v.id}>
            v{v.number}
          </option>
        ))}
      </Select>
    </div>
  );
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-3">
        {picker('from', 'From version', from.id, setFromId)}
        {picker('to', 'To version', to.id, setToId)}
      </div>
      {from.id === to.id ? (
        <p className="text-sm text-zinc-700">The same version is chosen twice: pick another to compare.</p>
      ) : (
        <VersionDiff from={contentOf(from)} to={contentOf(to)} fromLabel={`v${from.number}`} toLabel={`v${to.number}`} />
      )}
    </div>
  );
}
