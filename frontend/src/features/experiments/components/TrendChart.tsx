import { CartesianGrid, ErrorBar, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { TrendPoint } from '../lib/aggregate';

/** Composite (0–1) across iterations and the held-out composite, each with 95% CI error bars. */
export function TrendChart({ points }: { points: TrendPoint[] }) {
  if (points.length === 0) return <p className="text-sm text-zinc-600">The trend appears once an iteration is scored.</p>;
  return (
    <figure className="space-y-2" aria-label="Score trend across iterations">
      <div className="h-56 w-full min-w-0" data-testid="trend-chart">
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={points} margin={{ top: 8, right: 8, bottom: 8, left: 0 }}>
            <CartesianGrid strokeDasharray="3 3" stroke="#e4e4e7" />
            <XAxis dataKey="iteration" tickFormatter={(v: number) => `#${v}`} />
            <YAxis width={40} domain={[0, 1]} />
            <Tooltip formatter={(v) => (typeof v === 'number' ? v.toFixed(3) : String(v))} labelFormatter={(l) => `Iteration ${l}`} />
            <Legend />
            <Line type="monotone" dataKey="composite" name="Composite (all cases)" stroke="#4f46e5" strokeWidth={2} isAnimationActive={false}>
              <ErrorBar dataKey="ci" width={4} stroke="#4f46e5" />
            </Line>
            <Line type="monotone" dataKey="holdout" name="Held-out" stroke="#059669" strokeDasharray="4 2" isAnimationActive={false} connectNulls>
              <ErrorBar dataKey="holdoutCi" width={4} stroke="#059669" />
            </Line>
          </LineChart>
        </ResponsiveContainer>
      </div>
      <figcaption className="sr-only">
        {points.map((p) => `Iteration ${p.iteration}: ${p.composite?.toFixed(3) ?? 'no score'}`).join('; ')}
      </figcaption>
    </figure>
  );
}
