import { useState } from 'react';
import { EmptyState, ErrorState, Input, LoadingRows } from '@/components/ui';
import { useDebouncedValue } from '@/lib/useDebouncedValue';
import { ChallengeCard } from '../components/ChallengeCard';
import { useChallenges } from '../hooks/useArena';

/** EvalArena's library (spec §6 Page 1): pick a challenge, see which are Dev ready or Completed. */
export function ArenaLibraryPage() {
  const [q, setQ] = useState('');
  const query = useDebouncedValue(q.trim(), 250);
  const challenges = useChallenges(query);
  const items = challenges.data?.items ?? [];
  return (
    <div className="space-y-4">
      <div className="space-y-2">
        <h1 className="text-xl font-semibold text-zinc-900">EvalArena</h1>
        <p className="text-sm text-zinc-600">
          Practise writing evals on recorded agent traces: author YAML rules or a judge rubric, run them on the dev set, then ship
          to the hidden test set. A trace passes when your eval agrees with its label.
        </p>
      </div>
      <div className="max-w-md">
        <label htmlFor="arena-search" className="sr-only">
          Search challenges
        </label>
        <Input id="arena-search" type="search" placeholder="Search challenges" value={q} onChange={(e) => setQ(e.target.value)} />
      </div>
      {challenges.isPending ? (
        <LoadingRows label="Loading challenges" rows={4} />
      ) : challenges.isError ? (
        <ErrorState title="Could not load the challenges" error={challenges.error} onRetry={() => void challenges.refetch()} retrying={challenges.isFetching} />
      ) : items.length === 0 ? (
        <EmptyState
          title={query ? 'No challenge matches' : 'No challenges yet'}
          description={query ? `Nothing matches “${query}”. Try another word.` : 'An admin loads them with `assay seed`.'}
        />
      ) : (
        <ul aria-label="Challenges" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {items.map((c) => (
            <ChallengeCard key={c.id} challenge={c} />
          ))}
        </ul>
      )}
    </div>
  );
}
