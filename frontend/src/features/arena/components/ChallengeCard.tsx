import { Link } from 'react-router-dom';
import { Badge, buttonClasses } from '@/components/ui';
import type { ChallengeSummary } from '../types';

const difficultyTone = { Easy: 'success', Medium: 'warning', Hard: 'danger' } as const;

/** One challenge in the library: what it is, how it starts, and how far the caller got. */
export function ChallengeCard({ challenge }: { challenge: ChallengeSummary }) {
  const c = challenge;
  const headingId = `challenge-${c.id}-title`;
  return (
    <li aria-labelledby={headingId} className="flex flex-col rounded-xl border border-zinc-200 bg-white p-4" data-testid="challenge-card">
      <div className="flex flex-wrap items-center gap-2">
        <Badge>{c.category}</Badge>
        <Badge tone={difficultyTone[c.difficulty as keyof typeof difficultyTone] ?? 'neutral'}>{c.difficulty}</Badge>
        <Badge tone="indigo">{c.mode_label}</Badge>
      </div>
      <h2 id={headingId} className="mt-3 text-base font-semibold text-zinc-900">
        {c.title}
      </h2>
      <p className="font-mono text-sm text-zinc-500">{c.id}</p>
      <p className="mt-2 line-clamp-3 text-sm text-zinc-600">{c.description}</p>
      <p className="mt-2 text-sm text-zinc-500">
        {c.dev_count} dev traces · {c.test_count} hidden test traces
      </p>
      <div className="mt-auto flex flex-wrap items-center justify-between gap-2 pt-4">
        <div className="flex flex-wrap gap-2" aria-label="Progress">
          {c.progress.completed && <Badge tone="success">✓ Completed</Badge>}
          {c.progress.dev_ready && <Badge tone="indigo">Dev ready</Badge>}
          {!c.progress.completed && !c.progress.dev_ready && <span className="text-sm text-zinc-500">Not started or not ready</span>}
        </div>
        <Link to={`/arena/${c.id}`} className={buttonClasses('primary', 'sm')} aria-label={`Start ${c.title}`}>
          ▶ Start
        </Link>
      </div>
    </li>
  );
}
