import { lazy, Suspense, useState } from 'react';
import { Spinner } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';

export interface RuleProblem {
  line: number;
  column: number;
  message: string;
  /** A warning is shown but does not block (default: error). */
  level?: 'error' | 'warning';
}

// CodeMirror is loaded only when a rules scorer is edited: the entry chunk stays small.
const RulesCodeEditor = lazy(() => import('./RulesCodeEditor'));

export const RULES_EXAMPLE = `rules:
  - id: refund_needs_tool
    when: user_requests("refund")
    require: tool_called("process_refund")
    severity: high
    notes: "Agent must trigger the refund tool if the user asks."
`;

/** Problems of the rules text the server reported in a 422 (errors.positions["params.yaml"]). */
export function ruleProblems(errors: Record<string, unknown> | undefined): RuleProblem[] {
  const positions = errors?.positions as Record<string, unknown> | undefined;
  const found = positions?.['params.yaml'];
  if (!Array.isArray(found)) return [];
  return found.filter(
    (p): p is RuleProblem => typeof p === 'object' && p !== null && typeof (p as RuleProblem).line === 'number' && typeof (p as RuleProblem).message === 'string',
  );
}

interface RulesEditorProps {
  value: string;
  onChange: (text: string) => void;
  problems: RuleProblem[];
  /** A problem without a position (e.g. the field is missing). */
  error?: string;
  disabled?: boolean;
}

/** The EvalArena rules YAML in a code editor, with each problem at its line and column. */
export function RulesEditor({ value, onChange, problems, error, disabled }: RulesEditorProps) {
  const [focus, setFocus] = useState<RuleProblem | null>(null);
  const describedBy = problems.length || error ? 'rules-problems' : 'rules-hint';
  return (
    <div className="space-y-2">
      <span id="rules-label" className="block text-sm font-medium text-zinc-900">
        Rules (YAML)
      </span>
      <p id="rules-hint" className="text-sm text-zinc-500">
        Each rule has an id, a <code>when</code> (agent_says / user_requests), optionally a <code>require</code> (tool_called), an{' '}
        <code>action</code> when nothing is required, and a severity (low, high, critical).
      </p>
      {disabled ? (
        <pre className="overflow-x-auto rounded-xl bg-zinc-50 p-3 text-sm">{value}</pre>
      ) : (
        <Suspense
          fallback={
            <div role="status" className="flex h-56 items-center justify-center gap-2 rounded-xl border border-zinc-200 text-sm text-zinc-600">
              <Spinner /> Loading editor…
            </div>
          }
        >
          <RulesCodeEditor id="rules-yaml" value={value} onChange={onChange} problems={problems} focus={focus} labelledBy="rules-label" describedBy={describedBy} />
        </Suspense>
      )}
      {(problems.length > 0 || error) && (
        <div id="rules-problems" role="alert" className="space-y-1">
          {error && problems.length === 0 && <p className="text-sm text-red-700">{error}</p>}
          {problems.length > 0 && (
            <ul className="space-y-1" aria-label="Problems in the rules">
              {problems.map((p, i) => (
                <li key={i}>
                  <button
                    type="button"
                    className={cn('rounded-xl text-left text-sm text-red-700 underline-offset-2 hover:underline', focusRing)}
                    onClick={() => setFocus({ ...p })}
                  >
                    Line {p.line}, column {p.column}: {p.message}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}
