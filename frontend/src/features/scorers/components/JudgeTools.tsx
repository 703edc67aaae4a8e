import { useState } from 'react';
import { Alert, Badge, Button, Field, Input, Label, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { cn, focusRing } from '@/lib/cn';
import { formatMicros } from '@/lib/money';
import { usePreview, useTryScorer, type Params, type Trial } from '../hooks/useScorers';
import { OutputPicker } from './OutputPicker';

interface JudgeToolsProps {
  projectId: number;
  kind: string;
  params: Params;
  callsJudges: boolean;
  pairwise: boolean;
  canTry: boolean;
}

const score = (v: number | null) => (v === null ? '—' : v.toFixed(2));

/** The judge prompt these (unsaved) params render for a sample, and one real scoring of one output. */
export function JudgeTools({ projectId, kind, params, callsJudges, pairwise, canTry }: JudgeToolsProps) {
  const [output, setOutput] = useState('');
  const [second, setSecond] = useState('');
  const [question, setQuestion] = useState('');
  const [reference, setReference] = useState('');
  const [source, setSource] = useState<'text' | 'run'>('text');
  const [runId, setRunId] = useState<number | null>(null);
  const [outputId, setOutputId] = useState<number | null>(null);
  const preview = usePreview(projectId);
  const trial = useTryScorer(projectId);
  const sample = { output, input: question ? { question } : null, reference: reference || null };
  const tryErrors = fieldErrors(trial.error);

  return (
    <section aria-labelledby="try-heading" className="space-y-4 rounded-xl border border-zinc-200 p-4">
      <h2 id="try-heading" className="text-base font-semibold">
        {callsJudges ? 'Preview and try' : 'Try it'}
      </h2>
      {!pairwise && canTry && (
        <fieldset className="flex flex-wrap gap-4">
          <legend className="sr-only">What to score</legend>
          {(['text', 'run'] as const).map((s) => (
            <div key={s} className="flex items-center gap-2">
              <input type="radio" id={`try-source-${s}`} name="try-source" checked={source === s} onChange={() => setSource(s)} className="size-4 accent-indigo-600" />
              <Label htmlFor={`try-source-${s}`} className="font-normal">
                {s === 'text' ? 'Pasted text' : 'An output of a run'}
              </Label>
            </div>
          ))}
        </fieldset>
      )}
      {source === 'run' && !pairwise ? (
        <OutputPicker projectId={projectId} runId={runId} outputId={outputId} onRun={setRunId} onOutput={setOutputId} error={tryErrors.output_id} />
      ) : (
        <div className="space-y-3">
          <Field id="sample-output" label={pairwise ? 'Response 1' : 'Sample output'}>
            <Textarea id="sample-output" value={output} onChange={(e) => setOutput(e.target.value)} />
          </Field>
          {pairwise && (
            <Field id="sample-second" label="Response 2">
              <Textarea id="sample-second" value={second} onChange={(e) => setSecond(e.target.value)} />
            </Field>
          )}
          <div className="grid gap-3 sm:grid-cols-2">
            <Field id="sample-question" label={<>Question <span className="font-normal text-zinc-500">(optional)</span></>}>
              <Input id="sample-question" value={question} onChange={(e) => setQuestion(e.target.value)} />
            </Field>
            <Field id="sample-reference" label={<>Reference answer <span className="font-normal text-zinc-500">(optional)</span></>}>
              <Input id="sample-reference" value={reference} onChange={(e) => setReference(e.target.value)} />
            </Field>
          </div>
        </div>
      )}
      <div className="flex flex-wrap gap-2">
        {callsJudges && (
          <Button
            variant="secondary"
            loading={preview.isPending}
            disabled={!output}
            onClick={() => preview.mutate({ kind, params, sample, ...(pairwise ? { second: { output: second } } : {}) })}
          >
            Preview judge prompt
          </Button>
        )}
        {canTry && !pairwise && (
          <Button
            loading={trial.isPending}
            disabled={source === 'text' ? !output : outputId === null}
            onClick={() => trial.mutate({ kind, params, ...(source === 'run' ? { output_id: outputId } : { sample }) })}
          >
            {source === 'run' ? 'Try on this output' : 'Try on this text'}
          </Button>
        )}
      </div>
      {callsJudges && canTry && !pairwise && (
        <p className="text-sm text-zinc-500">Trying calls the judges for real: nothing is saved as a score, but their cost is added to the project’s spend.</p>
      )}
      {preview.isError && <Alert>{errorMessage(preview.error)}</Alert>}
      {preview.data && (
        <div className="space-y-2" aria-label="Judge prompt preview" role="region">
          <p className="text-sm text-zinc-600">Sent to each of: {preview.data.judges.join(', ')}</p>
          {preview.data.messages.map((m, i) => (
            <div key={i} className="space-y-1">
              <p className="text-sm font-medium">{String(m.role)}</p>
              {/* Scrolls on its own: focusable so the keyboard can scroll it too. */}
              <pre
                tabIndex={0}
                aria-label={`${String(m.role)} message`}
                className={cn('max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-xl bg-zinc-50 p-3 text-sm', focusRing)}
              >
                {String(m.content)}
              </pre>
            </div>
          ))}
        </div>
      )}
      {trial.isError && <Alert>{errorMessage(trial.error)}</Alert>}
      {trial.data && <TrialView trial={trial.data} />}
    </section>
  );
}

function TrialView({ trial }: { trial: Trial }) {
  return (
    <div role="region" aria-label="Trial result" className="space-y-3">
      {trial.judge_calls > 0 ? (
        <p className="text-sm">
          Cost: <span className="font-medium tabular-nums">{formatMicros(trial.cost_micros)}</span> over {trial.judge_calls} judge call
          {trial.judge_calls === 1 ? '' : 's'} (added to the project’s spend; no score was saved).
        </p>
      ) : (
        // a deterministic kind calls no judge: there is no cost to report
        <p className="text-sm">No score was saved.</p>
      )}
      {trial.results.length === 0 && <p className="text-sm text-zinc-600">This kind gave no automatic score.</p>}
      {trial.results.map((r, i) => (
        <div key={i} className="space-y-1 rounded-xl bg-zinc-50 p-3 text-sm">
          <div className="flex flex-wrap items-center gap-2">
            {r.judge_model && <span className="font-medium">{r.judge_model}</span>}
            {r.error ? (
              <Badge tone="danger">Error</Badge>
            ) : r.passed === null ? null : r.passed ? (
              <Badge tone="success">Pass</Badge>
            ) : (
              <Badge tone="danger">Fail</Badge>
            )}
            <span className="tabular-nums">Score {score(r.value)}</span>
            {r.severity && <span className="text-zinc-600">Severity {r.severity}</span>}
          </div>
          {r.error && <p className="text-red-700">{r.error}</p>}
          {Object.keys(r.criteria).length > 0 && (
            <ul className="flex flex-wrap gap-x-4">
              {Object.entries(r.criteria).map(([name, v]) => (
                <li key={name} className="tabular-nums">
                  {name}: {score(v)}
                </li>
              ))}
            </ul>
          )}
          {r.rationale && <p className="whitespace-pre-wrap break-words text-zinc-700">{r.rationale}</p>}
          {r.flags.length > 0 && <p className="text-zinc-700">Flags: {r.flags.join(', ')}</p>}
        </div>
      ))}
    </div>
  );
}
