import { Link } from 'react-router-dom';
import { Badge, buttonClasses, Dialog, ErrorState, LoadingRows } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import { useOutputDetail } from '../hooks/useRuns';
import { outputTone } from './outputTone';
import { RetrievedContext } from '../rag/RetrievedContext';
import { sourceChunkIds } from '../rag/context';
import { useDocumentNames } from '../rag/useDocumentNames';

const pretty = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

function Block({ title, value }: { title: string; value: unknown }) {
  return (
    <section className="space-y-1">
      <h3 className="text-sm font-medium text-zinc-900">{title}</h3>
      <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-words rounded-xl border border-zinc-200 bg-zinc-50 p-3 text-sm">{pretty(value)}</pre>
    </section>
  );
}

/** One output: the case, the reply or error, and the raw request and response. */
export function OutputDialog({ projectId, runId, outputId, onClose }: { projectId: number; runId: number; outputId: number | null; onClose: () => void }) {
  const detail = useOutputDetail(projectId, runId, outputId);
  const o = detail.data;
  const documentName = useDocumentNames(projectId, !!o?.retrieved?.length);
  return (
    <Dialog open={outputId !== null} onClose={onClose} size="wide" title={o ? `Case #${o.case_number ?? o.case_id} · ${o.label}` : 'Output'}>
      {detail.isPending ? (
        <LoadingRows label="Loading the output" rows={3} />
      ) : detail.isError ? (
        <ErrorState title="Could not load the output" error={detail.error} onRetry={() => detail.refetch()} />
      ) : (
        o && (
          <div className="space-y-4">
            <p className="flex flex-wrap items-center gap-2 text-sm text-zinc-600">
              <Badge tone={outputTone[o.status] ?? 'neutral'}>{o.status}</Badge>
              {o.repeat > 0 && <span>repeat {o.repeat + 1}</span>}
              {o.turn > 0 && <span>turn {o.turn + 1}</span>}
              <span>{o.attempts} {o.attempts === 1 ? 'attempt' : 'attempts'}</span>
              {o.latency_ms != null && <span>{o.latency_ms} ms</span>}
              {o.ttft_ms != null && <span>first token {o.ttft_ms} ms</span>}
              {o.cost_micros != null && <span>{formatMicros(o.cost_micros)}</span>}
              {o.cached && <span>cached</span>}
            </p>
            <Link to={`/projects/${projectId}/runs/${runId}/cases/${o.case_id}`} className={buttonClasses('secondary', 'sm')}>
              Compare every target on this case
            </Link>
            {(o.error_class || o.error) && (
              <p className="text-sm text-red-800">
                <span className="font-medium">{o.error_class ?? 'error'}</span>
                {o.error ? `: ${o.error}` : ''}
              </p>
            )}
            <Block title="Case input" value={o.case_input} />
            {o.case_expected != null && <Block title="Expected" value={o.case_expected} />}
            {o.retrieved && (
              <RetrievedContext chunks={o.retrieved} documentName={documentName} sourceIds={sourceChunkIds(o.case_expected, o.turn)} defaultOpen />
            )}
            <Block title="Output" value={o.text} />
            <Block title="Raw request" value={o.raw_request} />
            <Block title="Raw response" value={o.raw_response} />
          </div>
        )
      )}
    </Dialog>
  );
}
