import type { RunSummary } from '../api';

type Outcome = RunSummary['scoring'][number];

/** Scores that failed or could not be given: each is a failure of the run's scoring. */
export function scoringProblems(scoring: Outcome[]): number {
  return scoring.reduce((n, s) => n + s.failed + s.errored, 0);
}

/** Per scorer: scores failed and errored, the errors by class, beside the call errors. */
export function ScoringOutcomes({ scoring }: { scoring: Outcome[] }) {
  const bad = scoring.filter((s) => s.failed + s.errored > 0);
  if (bad.length === 0) return null;
  return (
    <div>
      <h3 className="text-sm font-medium text-zinc-900">Scoring failures</h3>
      <ul className="mt-1 space-y-2" aria-label="Scoring failures by scorer">
        {bad.map((s) => (
          <li key={s.scorer_id} className="text-sm" data-testid={`scoring-${s.scorer_id}`}>
            <p className="text-zinc-700">
              <span className="font-medium text-zinc-900">{s.name}</span>: {s.scores} {s.scores === 1 ? 'score' : 'scores'} · {s.passed} passed
              {s.failed > 0 && <span className="text-red-700"> · {s.failed} failed</span>}
              {s.errored > 0 && <span className="text-red-700"> · {s.errored} errored</span>}
            </p>
            {s.errored > 0 && (
              <ul className="mt-1 flex flex-wrap gap-2" aria-label={`Scoring errors of ${s.name} by class`}>
                {Object.entries(s.errors).map(([cls, n]) => (
                  <li key={cls} className="rounded-xl border border-red-200 bg-red-50 px-2 py-0.5 text-red-800">
                    {cls}: <span className="font-semibold tabular-nums">{n}</span>
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
