import { Link, useNavigate } from 'react-router-dom';
import { Alert, Button } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import type { Suggestion } from '../api';
import { useDuplicateExperiment } from '../hooks/useExperiments';

const RULES: Record<string, string> = {
  one_patch: 'not one unified diff',
  applies_cleanly: 'the diff does not apply to the prompt',
  length_change: 'changes the length by more than 15%',
  lines_changed: 'changes more than 20% of the lines',
  consecutive_removal: 'removes more than 5 lines in one place',
  variables_unchanged: 'adds or removes a {{variable}}',
  no_change: 'changes nothing',
  reply_format: 'reply not in the <diff>/<note> format',
};

type Failure = Suggestion['attempt_failures'][number];

function label(f: Failure): string {
  if (f.kind === 'guardrail') return `Guardrail ${f.rule ?? ''}: ${RULES[f.rule ?? ''] ?? 'broken'}`;
  if (f.kind === 'format') return 'Format: ' + RULES.reply_format;
  return `Call failed${f.rule ? ` (${f.rule})` : ''}`;
}

/** Why the refiner gave no suggestion (each refused attempt) and what to do next. */
export function NoSuggestion({ suggestion, projectId, experimentId, promptId }: { suggestion: Suggestion; projectId: number; experimentId: number; promptId: number | null }) {
  const navigate = useNavigate();
  const duplicate = useDuplicateExperiment(projectId);
  const failures = suggestion.attempt_failures ?? [];
  const base = `/projects/${projectId}`;
  return (
    <section aria-label="No suggestion" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-3">
      <Alert tone="info">No suggestion: {suggestion.no_suggestion_reason ?? 'the refiner gave no valid diff.'}</Alert>
      {failures.length > 0 && (
        <ol className="list-decimal space-y-1 pl-5 text-sm" data-testid="attempt-failures">
          {failures.map((f) => (
            <li key={f.attempt}>
              <span className="font-medium">Attempt {f.attempt} — {label(f)}.</span> <span className="break-words text-zinc-600">{f.message}</span>
            </li>
          ))}
        </ol>
      )}
      <h3 className="text-sm font-semibold">Next</h3>
      <div className="flex flex-wrap gap-2">
        <Button variant="secondary" loading={duplicate.isPending}
          onClick={() => duplicate.mutate(experimentId, { onSuccess: (copy) => navigate(`${base}/experiments/${copy.id}/edit`) })}>
          Retry with another refiner model
        </Button>
        {promptId !== null && <Link className="rounded-lg border border-zinc-300 px-3 py-1.5 text-sm" to={`${base}/prompts/${promptId}`}>Edit the prompt by hand</Link>}
        <Link className="rounded-lg border border-zinc-300 px-3 py-1.5 text-sm" to={`${base}/experiments/${experimentId}/report`}>Finish: see the report</Link>
      </div>
      <p className="text-xs text-zinc-500">Retry makes a draft copy of this experiment: pick another refiner model in its wizard and start it.</p>
      {duplicate.isError && <Alert>{errorMessage(duplicate.error)}</Alert>}
    </section>
  );
}
