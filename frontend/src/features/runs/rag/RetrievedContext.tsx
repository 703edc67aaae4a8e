import { useState } from 'react';
import { cn, focusRing } from '@/lib/cn';
import type { RetrievedChunk } from './context';

const PREVIEW_CHARS = 220;

function ChunkItem({ chunk, documentName, source }: { chunk: RetrievedChunk; documentName: string; source: boolean }) {
  const [full, setFull] = useState(false);
  const long = chunk.text.length > PREVIEW_CHARS;
  return (
    <li className={cn('min-w-0 rounded-lg border bg-white p-2', source ? 'border-emerald-400' : 'border-zinc-200')} data-testid="retrieved-chunk">
      <p className="flex flex-wrap items-center gap-x-2 text-xs text-zinc-600">
        <span className="min-w-0 break-all font-medium text-zinc-900">{documentName}</span>
        <span>chunk {chunk.position + 1}</span>
        <span className="tabular-nums">score {chunk.score.toFixed(2)}</span>
        {source && <span className="font-medium text-emerald-800">ground-truth source</span>}
      </p>
      <p className="mt-1 whitespace-pre-wrap break-words text-sm text-zinc-900">{long && !full ? `${chunk.text.slice(0, PREVIEW_CHARS)}…` : chunk.text}</p>
      {long && (
        <button type="button" aria-expanded={full} onClick={() => setFull((v) => !v)} className={cn('mt-1 rounded text-xs text-indigo-700 hover:text-indigo-800', focusRing)}>
          {full ? 'Show less' : 'Show the whole chunk'}
        </button>
      )}
    </li>
  );
}

/**
 * "Context (k chunks)": what an answer was given, best first, as a disclosure (details/summary:
 * keyboard and screen-reader native). Chunks the ground truth came from are marked.
 */
export function RetrievedContext({
  chunks,
  documentName,
  sourceIds,
  defaultOpen = false,
  className,
}: {
  chunks: RetrievedChunk[];
  documentName: (documentId: number) => string;
  /** The chunk ids the case's ground truth was drawn from, when recorded. */
  sourceIds?: readonly number[] | null;
  defaultOpen?: boolean;
  className?: string;
}) {
  const sources = new Set(sourceIds ?? []);
  const overlap = chunks.filter((c) => sources.has(c.chunk_id)).length;
  return (
    <details className={cn('min-w-0 text-sm', className)} open={defaultOpen || undefined} data-testid="retrieved-context">
      <summary className={cn('cursor-pointer rounded text-indigo-700 hover:text-indigo-800', focusRing)}>
        Context ({chunks.length} {chunks.length === 1 ? 'chunk' : 'chunks'})
        {sources.size > 0 && (
          <span className="text-zinc-600">
            {' '}
            · {overlap} of {sources.size} ground-truth {sources.size === 1 ? 'source' : 'sources'} retrieved
          </span>
        )}
      </summary>
      {chunks.length === 0 ? (
        <p className="mt-1 text-zinc-600">Nothing in the documents matched the question.</p>
      ) : (
        <ol className="mt-1 space-y-1" aria-label="Retrieved chunks">
          {chunks.map((c) => (
            <ChunkItem key={c.chunk_id} chunk={c} documentName={documentName(c.document_id)} source={sources.has(c.chunk_id)} />
          ))}
        </ol>
      )}
    </details>
  );
}
