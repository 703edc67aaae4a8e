import { useState } from 'react';
import { Badge, Button } from '@/components/ui';
import { outputTone } from '@/features/runs/components/outputTone';
import { formatMicros } from '@/lib/money';
import { criterionOnScale, scoreOnScale } from '@/features/results/scale';
import { RetrievedContext } from '@/features/runs/rag/RetrievedContext';
import type { CaseOutput, Score } from '../api';

const PREVIEW_CHARS = 600;

function ScoreRow({ score }: { score: Score }) {
  const value = scoreOnScale(score);
  const verdict = score.passed == null ? null : score.passed ? 'pass' : 'fail';
  const who = score.author_name ? ` by ${score.author_name}` : score.source && !score.source.startsWith('user:') ? ` (${score.source})` : '';
  return (
    <li className="rounded-lg border border-zinc-200 bg-white p-2 text-sm">
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-medium text-zinc-900">
          {score.scorer_name}
          <span className="font-normal text-zinc-600">{who}</span>
        </span>
        <span className="ml-auto font-mono text-zinc-900" aria-label={`score ${value}`}>
          {value}
        </span>
        {verdict && <Badge tone={score.passed ? 'success' : 'danger'}>{verdict}</Badge>}
        {score.severity && <Badge tone="warning">{score.severity}</Badge>}
      </div>
      {score.error && <p className="mt-1 text-red-800">Scoring failed: {score.error}</p>}
      {Object.keys(score.criteria).length > 0 && (
        <p className="mt-1 text-zinc-700">
          {Object.entries(score.criteria)
            .map(([k, v]) => `${k} ${criterionOnScale(score, k, v)}`)
            .join(' · ')}
        </p>
      )}
      {(score.rationale || score.comment) && (
        <details className="mt-1">
          <summary className="cursor-pointer rounded text-indigo-700 hover:text-indigo-800 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500">
            {score.kind === 'manual' ? 'Comment' : 'Rationale'}
          </summary>
          <p className="mt-1 whitespace-pre-wrap text-zinc-800">{score.rationale || score.comment}</p>
        </details>
      )}
    </li>
  );
}

/** One output of a target: status, error class, tokens, cost, latency, the text and its scores. */
export function OutputCard({
  output,
  label,
  detail,
  documentName,
  sourceIds,
}: {
  output: CaseOutput;
  label: string;
  detail?: string;
  /** Names the documents of an answer from documents (its retrieved chunks). */
  documentName?: (documentId: number) => string;
  /** The chunks this turn's ground truth came from, marked among those retrieved. */
  sourceIds?: readonly number[] | null;
}) {
  const [full, setFull] = useState(false);
  const text = output.text ?? '';
  const long = text.length > PREVIEW_CHARS;
  return (
    <article aria-label={label} className="space-y-2 rounded-xl border border-zinc-200 bg-zinc-50 p-3">
      <h4 className="sr-only">{label}</h4>
      <div className="flex flex-wrap items-center gap-2 text-sm text-zinc-700">
        <Badge tone={outputTone[output.status] ?? 'neutral'}>{output.status}</Badge>
        {detail && <span className="font-medium text-zinc-900">{detail}</span>}
        {output.tokens_in != null && (
          <span>
            {output.tokens_in} in / {output.tokens_out ?? 0} out tokens
          </span>
        )}
        {output.cost_micros != null && <span>{formatMicros(output.cost_micros)}</span>}
        {output.latency_ms != null && <span>{output.latency_ms} ms</span>}
        {output.cached && <span>cached</span>}
      </div>
      {(output.error_class || output.error) && (
        <p className="text-sm text-red-800">
          <span className="font-medium">{output.error_class ?? 'error'}</span>
          {output.error ? `: ${output.error}` : ''}
        </p>
      )}
      {output.text != null ? (
        <div>
          <p className="whitespace-pre-wrap break-words rounded-lg border border-zinc-200 bg-white p-2 text-sm text-zinc-900" data-testid="output-text">
            {long && !full ? `${text.slice(0, PREVIEW_CHARS)}…` : text}
          </p>
          {long && (
            <Button variant="ghost" size="sm" onClick={() => setFull((v) => !v)} aria-expanded={full}>
              {full ? 'Show less' : 'Show the whole output'}
            </Button>
          )}
        </div>
      ) : (
        !output.error && <p className="text-sm text-zinc-600">No output yet.</p>
      )}
      {output.retrieved && (
        <RetrievedContext chunks={output.retrieved} documentName={documentName ?? ((id) => `document #${id}`)} sourceIds={sourceIds} />
      )}
      {output.scores.length > 0 ? (
        <ul className="space-y-1" aria-label="Scores">
          {output.scores.map((s) => (
            <ScoreRow key={s.id} score={s} />
          ))}
        </ul>
      ) : (
        <p className="text-sm text-zinc-600">Not scored.</p>
      )}
    </article>
  );
}
