import { Badge } from '@/components/ui';
import type { Critique as CritiqueData, ReportEntry } from '../types';

const KIND = { missed_failure: 'Missed failure', false_alarm: 'False alarm' } as const;

/** The hidden set's misses, redacted on the server: what to generalise, not the traces. */
export function TestReport({ report }: { report: ReportEntry[] }) {
  return (
    <section aria-label="Hidden test set report" className="space-y-2" data-testid="test-report">
      <h4 className="text-sm font-medium text-zinc-900">Redacted failure report ({report.length})</h4>
      <p className="text-sm text-zinc-600">
        Hidden traces never leave the server: each miss shows its cluster, the contract clause and masked excerpts (■■■ hides words).
      </p>
      {report.length === 0 ? (
        <p className="text-sm text-zinc-500">No miss on the hidden set.</p>
      ) : (
        <ul className="space-y-2">
          {report.map((r) => (
            <li key={r.trace_id} className="space-y-2 rounded-xl border border-zinc-200 p-3" data-testid="report-entry">
              <div className="flex flex-wrap items-center gap-2">
                <span className="text-sm font-medium text-zinc-900">{r.cluster}</span>
                <Badge tone={r.miss === 'missed_failure' ? 'danger' : 'warning'}>{KIND[r.miss]}</Badge>
                {r.severity && <Badge>{r.severity}</Badge>}
              </div>
              {r.contract_clause && <p className="text-sm text-zinc-700">Clause: {r.contract_clause}</p>}
              {r.excerpts.map((x, j) => (
                <blockquote key={j} className="whitespace-pre-wrap break-words border-l-2 border-zinc-300 pl-2 text-sm text-zinc-700">
                  <span className="font-medium">{x.role}:</span> <span className="font-mono">{x.text}</span>
                </blockquote>
              ))}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The meta-judge's critique of the rubric (judge mode), with its structured flags. */
export function Critique({ critique }: { critique: CritiqueData | null | undefined }) {
  if (!critique) return null;
  const flags: string[] = [];
  if (critique.references_contract === false) flags.push('does not reference the contract');
  if (critique.defines_evidence === false) flags.push('does not define evidence');
  if (critique.high_variance) flags.push('expect high variance');
  return (
    <section aria-label="Meta-judge critique" className="rounded-xl border border-indigo-200 bg-indigo-50 p-3" data-testid="critique">
      <h4 className="text-sm font-medium text-indigo-900">Meta-judge critique of your rubric</h4>
      {critique.error ? (
        <p className="mt-1 text-sm text-red-800">The meta-judge could not answer: {critique.error}</p>
      ) : (
        <p className="mt-1 whitespace-pre-wrap text-sm text-indigo-950">{critique.critique}</p>
      )}
      {flags.length > 0 && <p className="mt-1 text-sm text-indigo-900">Flags: {flags.join('; ')}.</p>}
      {critique.missing_clauses.length > 0 && (
        <p className="mt-1 text-sm text-indigo-900">Missing clauses: {critique.missing_clauses.join('; ')}</p>
      )}
      {critique.vague_phrases.length > 0 && (
        <p className="mt-1 text-sm text-indigo-900">Vague: {critique.vague_phrases.map((v) => `“${v}”`).join(', ')}</p>
      )}
    </section>
  );
}
