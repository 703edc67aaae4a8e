import type { RunProblem } from '../api';

const MAX_CASES_SHOWN = 10;

/** Why a run cannot start: every reason, with the cases and variables it names. */
export function RunProblems({ problems, title = 'The run cannot start', id }: { problems: RunProblem[]; title?: string; id?: string }) {
  if (problems.length === 0) return null;
  return (
    <div role="alert" id={id} className="space-y-2 rounded-xl border border-red-200 bg-red-50 p-3 text-sm text-red-800" data-testid="run-problems">
      <p className="font-semibold">{title}</p>
      <ul className="list-disc space-y-1 pl-5">
        {problems.map((p, i) => (
          <li key={`${p.code}-${i}`} data-code={p.code}>
            {p.message}
            {p.variables && p.variables.length > 0 && <> (variables: {p.variables.join(', ')})</>}
            {p.case_ids && p.case_ids.length > 0 && (
              <>
                {' '}
                (cases {p.case_ids.slice(0, MAX_CASES_SHOWN).map((c) => `#${c}`).join(', ')}
                {p.case_ids.length > MAX_CASES_SHOWN ? ` and ${p.case_ids.length - MAX_CASES_SHOWN} more` : ''})
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
