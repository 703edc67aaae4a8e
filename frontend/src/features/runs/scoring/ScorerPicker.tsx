import { Link } from 'react-router-dom';
import { Badge, buttonClasses, Checkbox, EmptyState, ErrorState, Label, LoadingRows, Select } from '@/components/ui';
import { HUMAN_KINDS, PAIR_KINDS, scorersUrl, useActiveScorers, useScorerDetail, type Scorer, type ScorerPick } from './api';

/** True when a scorer's version calls LLM judges (its cost shows in the estimate). */
export function judged(scorer: Pick<Scorer, 'latest'>): boolean {
  const judges = (scorer.latest.params as { judges?: unknown }).judges;
  return Array.isArray(judges) && judges.length > 0;
}

/** The version a pick stands for: the chosen one, else the scorer's latest. */
export function pickedVersion(pick: ScorerPick, scorers: Scorer[]): number | null {
  return pick.versionId ?? scorers.find((s) => s.id === pick.scorerId)?.latest.id ?? null;
}

/**
 * The project's scorers that score outputs (not archived, not pairwise judges), each
 * picked at its latest version or at a chosen one. `pinned`: versions already on the run
 * (adding scorers to a finished run), shown and not offered again.
 */
export function ScorerPicker({
  projectId,
  value,
  onChange,
  pinned = [],
  idPrefix = 'scorer',
}: {
  projectId: number;
  value: ScorerPick[];
  onChange: (next: ScorerPick[]) => void;
  pinned?: number[];
  idPrefix?: string;
}) {
  const scorers = useActiveScorers(projectId);
  if (scorers.isPending) return <LoadingRows label="Loading scorers" />;
  if (scorers.isError) return <ErrorState title="Could not load the scorers" error={scorers.error} onRetry={() => scorers.refetch()} />;
  const items = scorers.data.items.filter((s) => !PAIR_KINDS.includes(s.kind));
  if (items.length === 0) {
    return (
      <EmptyState
        title="No scorers yet"
        description="This project has no scorer to score outputs with. Create one (a reference check, an LLM judge, a rubric…) on the Scorers page."
        action={
          <Link to={scorersUrl(projectId)} className={buttonClasses('secondary')}>
            Go to scorers
          </Link>
        }
      />
    );
  }
  const toggle = (scorerId: number, on: boolean) =>
    onChange(on ? [...value, { scorerId, versionId: null }] : value.filter((p) => p.scorerId !== scorerId));
  const setVersion = (scorerId: number, versionId: number | null) =>
    onChange(value.map((p) => (p.scorerId === scorerId ? { ...p, versionId } : p)));
  return (
    <ul className="space-y-2" aria-label="Scorers">
      {items.map((s) => {
        const pick = value.find((p) => p.scorerId === s.id);
        const id = `${idPrefix}-${s.id}`;
        return (
          <li key={s.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded-xl border border-zinc-200 p-2">
            <Checkbox id={id} checked={!!pick} onChange={(e) => toggle(s.id, e.target.checked)} />
            <Label htmlFor={id} className="min-w-0 flex-1 font-normal">
              <span className="font-medium">{s.name}</span> <span className="text-zinc-500">· {s.kind}</span>
              {judged(s) && (
                <Badge tone="warning" className="ml-2">
                  LLM judge
                </Badge>
              )}
              {HUMAN_KINDS.includes(s.kind) && <span className="text-zinc-500"> · scored by reviewers</span>}
            </Label>
            {pick && <VersionSelect projectId={projectId} scorer={s} pick={pick} pinned={pinned} id={`${id}-version`} onChange={setVersion} />}
          </li>
        );
      })}
    </ul>
  );
}

function VersionSelect({
  projectId,
  scorer,
  pick,
  pinned,
  id,
  onChange,
}: {
  projectId: number;
  scorer: Scorer;
  pick: ScorerPick;
  pinned: number[];
  id: string;
  onChange: (scorerId: number, versionId: number | null) => void;
}) {
  const detail = useScorerDetail(projectId, scorer.id);
  const versions = detail.data?.versions ?? [scorer.latest];
  const chosen = pick.versionId ?? scorer.latest.id;
  const onRun = pinned.includes(chosen);
  return (
    <span className="flex items-center gap-2">
      <Label htmlFor={id} className="sr-only">
        Version of {scorer.name}
      </Label>
      <Select
        id={id}
        controlSize="sm"
        value={pick.versionId ?? ''}
        aria-invalid={onRun || undefined}
        onChange={(e) => onChange(scorer.id, e.target.value ? Number(e.target.value) : null)}
      >
        <option value="">Latest (v{scorer.latest.number})</option>
        {versions
          .filter((v) => v.id !== scorer.latest.id)
          .map((v) => (
            <option key={v.id} value={v.id} disabled={pinned.includes(v.id)}>
              v{v.number}
              {pinned.includes(v.id) ? ' (on this run)' : ''}
            </option>
          ))}
      </Select>
      {onRun && (
        <span className="text-sm text-red-700" role="alert">
          v{versions.find((v) => v.id === chosen)?.number ?? scorer.latest.number} is already on this run
        </span>
      )}
    </span>
  );
}
