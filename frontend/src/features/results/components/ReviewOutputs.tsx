import { Badge } from '@/components/ui';
import type { OutputDetail } from '@/features/runs/api';
import { formatMicros } from '@/lib/money';
import { formatScore, type GridRow } from '../api';
import type { ReviewItem } from '../hooks/reviewItems';

const pretty = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** The case under review: its input and expected answer (full, from the output's detail once loaded). */
export function ReviewInput({ row, detail }: { row: GridRow; detail: OutputDetail | undefined }) {
  return (
    <div className="space-y-3">
      <Block title="Input" value={detail ? detail.case_input : row.input} />
      {detail?.case_expected && <Block title="Expected" value={detail.case_expected} />}
    </div>
  );
}

/** Every output of the cell (one per repeat) with its numbers, and the first one's scores. */
export function ReviewOutputs({ item, details, userId }: { item: ReviewItem; details: Array<OutputDetail | undefined>; userId: number | undefined }) {
  const repeats = item.outputs.length;
  return (
    <>
      {item.outputs.map((output, i) => (
        <div key={output.id} className="space-y-1">
          <p className="flex flex-wrap gap-2 text-sm text-zinc-600">
            {output.latency_ms != null && <span>{output.latency_ms} ms</span>}
            {output.tokens_out != null && <span>{(output.tokens_in ?? 0) + output.tokens_out} tokens</span>}
            {output.cost_micros != null && <span>{formatMicros(output.cost_micros)}</span>}
          </p>
          <Block title={repeats > 1 ? `Output · ${item.label} · repeat ${output.repeat + 1}` : `Output · ${item.label}`} value={details[i]?.text ?? output.text} testId={i === 0 ? 'review-output' : undefined} />
        </div>
      ))}
      <div className="space-y-1 text-sm">
        <h3 className="font-medium text-zinc-900">Scores{repeats > 1 ? ' (repeat 1)' : ''}</h3>
        {item.outputs[0].scores.length === 0 ? (
          <p className="text-zinc-600">None yet.</p>
        ) : (
          <ul className="space-y-1" data-testid="review-scores">
            {item.outputs[0].scores.map((s) => (
              <li key={s.id}>
                <Badge tone={s.passed === true ? 'success' : s.passed === false ? 'danger' : 'neutral'}>
                  {s.scorer_name} {s.kind === 'manual' && s.rating != null ? `${s.rating}/5` : formatScore(s.value)}
                  {s.passed === true ? ' ✓' : s.passed === false ? ' ✗' : ''}
                </Badge>{' '}
                {s.kind === 'manual' && s.author_id === userId ? 'you' : ''} {s.rationale}
              </li>
            ))}
          </ul>
        )}
      </div>
    </>
  );
}

function Block({ title, value, testId }: { title: string; value: unknown; testId?: string }) {
  return (
    <section className="space-y-1">
      <h3 className="text-sm font-medium text-zinc-900">{title}</h3>
      <pre data-testid={testId} className="max-h-80 overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-zinc-50 p-3 text-sm">
        {pretty(value)}
      </pre>
    </section>
  );
}
