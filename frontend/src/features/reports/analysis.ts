import type { ComparisonSummary } from './api';

type Pair = ComparisonSummary['pairs'][number];

export interface WinCell {
  /** Share of games the row target won against the column target (a tie or a split verdict counts half). */
  rate: number | null;
  games: number;
  wins: number;
  losses: number;
  draws: number;
}

/**
 * The pairwise win matrix over every judge and scorer in the summary: cell [row][col] is
 * how often `row` beat `col`, with ties and disagreements of the two orders counting half
 * to each side (as the Bradley–Terry ratings count them). Failed judgements are not games.
 */
export function winMatrix(pairs: Pair[]): { targets: { id: number; label: string }[]; cell: (row: number, col: number) => WinCell } {
  const labels = new Map<number, string>();
  const tally = new Map<string, { wins: number; losses: number; draws: number }>();
  const add = (row: number, col: number, wins: number, losses: number, draws: number) => {
    const k = `${row}:${col}`;
    const t = tally.get(k) ?? { wins: 0, losses: 0, draws: 0 };
    t.wins += wins;
    t.losses += losses;
    t.draws += draws;
    tally.set(k, t);
  };
  for (const p of pairs) {
    labels.set(p.target_a_id, p.target_a_label);
    labels.set(p.target_b_id, p.target_b_label);
    const draws = p.ties + p.disagreements;
    add(p.target_a_id, p.target_b_id, p.a_wins, p.b_wins, draws);
    add(p.target_b_id, p.target_a_id, p.b_wins, p.a_wins, draws);
  }
  const targets = [...labels].map(([id, label]) => ({ id, label })).sort((x, y) => x.id - y.id);
  return {
    targets,
    cell: (row, col) => {
      const t = tally.get(`${row}:${col}`) ?? { wins: 0, losses: 0, draws: 0 };
      const games = t.wins + t.losses + t.draws;
      return { ...t, games, rate: games ? (t.wins + t.draws / 2) / games : null };
    },
  };
}

/**
 * A heat colour for a value between lo and hi, with a text colour that keeps at least
 * 4.5:1 contrast on it. Five steps, so the printed number (not the colour) carries the value.
 */
export function heat(value: number | null, lo: number, hi: number): { background: string; color: string } {
  if (value === null) return { background: '#f4f4f5', color: '#3f3f46' };
  const steps = ['#eef2ff', '#c7d2fe', '#a5b4fc', '#818cf8', '#3730a3'];
  const t = hi > lo ? (value - lo) / (hi - lo) : 0.5;
  const i = Math.min(steps.length - 1, Math.max(0, Math.floor(t * steps.length)));
  return { background: steps[i]!, color: i === steps.length - 1 ? '#ffffff' : '#18181b' };
}
