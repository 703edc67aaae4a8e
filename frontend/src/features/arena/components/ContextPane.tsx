import { Badge } from '@/components/ui';
import { TraceView } from '@/features/cases/components/TraceView';
import { findingsFor, toTraceMessage, tracePrefix } from '../logic';
import type { Attempt, Challenge } from '../types';
import { AgentContext } from './AgentContext';

interface ContextPaneProps {
  challenge: Challenge;
  traceId: string;
  onTrace: (id: string) => void;
  /** The last dev run of the active tab: its verdicts mark the tickets and highlight evidence. */
  attempt: Attempt | null;
}

/** Pane 1: pick a dev ticket, read the agent's context and contract, and the transcript. */
export function ContextPane({ challenge, traceId, onTrace, attempt }: ContextPaneProps) {
  const trace = challenge.dev_traces.find((t) => t.id === traceId) ?? challenge.dev_traces[0];
  const result = attempt?.results?.find((r) => r.trace_id === trace?.id);
  const mark = (id: string) => {
    const r = attempt?.results?.find((x) => x.trace_id === id);
    return r ? (r.agreed ? ' ✓' : ' ✗ miss') : '';
  };
  return (
    <div className="space-y-3">
      <div>
        <label htmlFor="arena-ticket" className="block text-sm font-medium text-zinc-900">
          Ticket (dev set, {challenge.dev_traces.length})
        </label>
        <select
          id="arena-ticket"
          value={trace?.id ?? ''}
          onChange={(e) => onTrace(e.target.value)}
          className="mt-1 h-10 w-full rounded-xl border border-zinc-200 bg-white px-3 text-sm text-zinc-900 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500"
        >
          {challenge.dev_traces.map((t) => (
            <option key={t.id} value={t.id}>
              {t.id}
              {mark(t.id)}
            </option>
          ))}
        </select>
      </div>
      <AgentContext challenge={challenge} />
      {trace ? (
        <section aria-labelledby="transcript-heading" className="space-y-2">
          <div className="flex flex-wrap items-center gap-2">
            <h3 id="transcript-heading" className="text-sm font-medium text-zinc-900">
              Transcript <span className="font-mono">{trace.id}</span>
            </h3>
            {result && (
              <Badge tone={result.agreed ? 'success' : 'danger'} data-testid="trace-verdict">
                your eval: {result.verdict}
                {result.agreed ? ', agrees with the label' : ', disagrees with the label'}
              </Badge>
            )}
          </div>
          {result && (
            <p className="text-sm text-zinc-700" data-testid="trace-label">
              Label: <span className="font-medium">{result.label}</span>
              {result.violated_clause != null &&
                ` — breaks clause ${result.violated_clause}: ${challenge.context.contract[result.violated_clause] ?? ''}`}
              {result.label_severity ? ` (${result.label_severity})` : ''}
            </p>
          )}
          {result?.reasoning && <p className="text-sm text-zinc-600">{result.reasoning}</p>}
          <TraceView
            key={trace.id}
            messages={trace.messages.map(toTraceMessage)}
            findings={findingsFor(attempt, trace.id)}
            idPrefix={tracePrefix(trace.id)}
            hideEvidenceNav={!attempt}
          />
        </section>
      ) : (
        <p className="text-sm text-zinc-600">This challenge has no dev traces.</p>
      )}
    </div>
  );
}
