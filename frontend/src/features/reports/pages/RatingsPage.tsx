import { useId } from 'react';
import { EmptyState, Select } from '@/components/ui';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { ProjectRatings } from '../api';
import { Figure } from '../components/Figure';
import { IntervalBars } from '../components/charts';
import { Loading, LoadError, ReportsShell } from '../components/ReportsShell';
import { ScopeFilters, useScope } from '../components/ScopeFilters';
import { errorBar, int, interval, modelName, num } from '../format';
import { useRatings, useScorers } from '../hooks';
import { useIdParam } from '../components/useIdParam';

const FLAGS: Record<string, string> = { undefeated: 'won every game', winless: 'lost every game', no_games: 'no games' };

function PairwisePicker({ projectId, value, onChange }: { projectId: number; value: number | null; onChange: (id: number | null) => void }) {
  const id = useId();
  const scorers = useScorers(projectId);
  const options = (scorers.data?.items ?? []).filter((s) => s.kind === 'pairwise_judge');
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="text-sm text-zinc-700">
        Pairwise judge
      </label>
      <Select id={id} controlSize="sm" value={value === null ? 'all' : String(value)} onChange={(e) => onChange(e.target.value === 'all' ? null : Number(e.target.value))}>
        <option value="all">Every pairwise judge</option>
        {options.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </Select>
    </div>
  );
}

function leftOut(r: ProjectRatings) {
  const parts = [];
  if (r.same_model) parts.push(`${int(r.same_model)} comparing a model with itself`);
  if (r.without_model) parts.push(`${int(r.without_model)} involving a recorded trace`);
  return parts.length ? ` Left out: ${parts.join(', ')}.` : '';
}

function Ratings({ r }: { r: ProjectRatings }) {
  const rated = r.items.filter((i) => i.rating !== null);
  const lows = rated.map((i) => i.low ?? i.rating!);
  const highs = rated.map((i) => i.high ?? i.rating!);
  const domain: [number, number] = [Math.floor((Math.min(...lows) - 50) / 50) * 50, Math.ceil((Math.max(...highs) + 50) / 50) * 50];
  return (
    <Figure
      title="Bradley–Terry rating by model"
      description={`From ${int(r.n_comparisons)} judged comparisons across ${int(r.runs)} runs; mean 1000, +400 means 10:1 odds of winning; whiskers are the ${Math.round(r.confidence * 100)}% bootstrap interval. A tie, or a judgement whose two orders disagreed, is half a win each.${leftOut(r)}`}
      chart={(w, h) => (
        <IntervalBars width={w} height={h} valueLabel="Rating" domain={domain} data={rated.map((i) => ({ name: modelName(i.model_name), value: i.rating, err: errorBar(i.rating, i.low, i.high) }))} />
      )}
      table={{
        rowKey: (i) => i.model_id,
        rows: r.items,
        columns: [
          { key: 'model', header: 'Model', cell: (i) => modelName(i.model_name) },
          { key: 'rating', header: 'Rating', cell: (i) => num(i.rating, 0), numeric: true },
          { key: 'ci', header: `${Math.round(r.confidence * 100)}% interval`, cell: (i) => interval(i.low, i.high, (v) => num(v, 0)), numeric: true },
          { key: 'record', header: 'Won / tied / lost', cell: (i) => `${i.wins} / ${i.ties} / ${i.losses}`, numeric: true },
          { key: 'games', header: 'Games', cell: (i) => int(i.games), numeric: true },
          { key: 'flags', header: 'Note', cell: (i) => i.flags.map((f) => FLAGS[f] ?? f).join(', ') || '—' },
        ],
      }}
    />
  );
}

export function RatingsPage() {
  const { project } = useProjectOutlet();
  const scope = useScope();
  const [scorerId, setJudge] = useIdParam('judge');
  const ratings = useRatings(project.id, scorerId, scope.scope, scope.valid);

  let body;
  if (!scope.valid) body = null;
  else if (ratings.isPending) body = <Loading label="Loading the model ratings" />;
  else if (ratings.isError) body = <LoadError what="the model ratings" error={ratings.error} retry={() => ratings.refetch()} retrying={ratings.isFetching} />;
  else if (!ratings.data.available)
    body = <EmptyState title="No ratings yet" description={`${ratings.data.message ?? ''}${leftOut(ratings.data)}`} />;
  else body = <Ratings r={ratings.data} />;
  return (
    <ReportsShell
      projectId={project.id}
      title="Model ratings"
      intro="A Bradley–Terry leaderboard of the project's models from every pairwise judgement across its runs (two targets of a run, or two runs)."
      controls={<PairwisePicker projectId={project.id} value={scorerId} onChange={setJudge} />}
    >
      <ScopeFilters projectId={project.id} state={scope} />
      {body}
    </ReportsShell>
  );
}
