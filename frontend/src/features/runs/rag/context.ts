// "Answer from documents" (issue 33 A.2): the chunks an answer was given, and the chunks its
// case's ground truth was drawn from (generation records them in expected.source_chunks).
import type { components } from '@/api/schema';

export type RetrievedChunk = components['schemas']['RetrievedChunk'];

/** The server's default (core/retrieval/rag_run.py DEFAULT_TEMPLATE), shown so it can be edited. */
export const DEFAULT_RAG_TEMPLATE =
  'Answer the question using only the context below. If the context does not hold the answer, say so.\n\nContext:\n{{context}}\n\nQuestion: {{question}}';
export const RAG_TOP_K_DEFAULT = 4;
export const RAG_TOP_K_MAX = 20;
export const RAG_DOCUMENTS_MAX = 20;
export const RAG_TEMPLATE_MAX = 8000;
/** The placeholders a template may hold; both are required. */
export const RAG_PLACEHOLDERS = [
  { name: '{{context}}', means: 'the retrieved chunks, numbered [1], [2]…, best first' },
  { name: '{{question}}', means: "the case's question (or the turn's user message)" },
] as const;

/**
 * The chunk ids a turn's ground truth came from, or null when the case records none. One flat
 * list for a single question; one list per user turn for a conversation (as the scorer reads it).
 */
export function sourceChunkIds(expected: unknown, turn: number): number[] | null {
  const found = sourceChunks(expected);
  if (!found) return null;
  const list = found.every(Array.isArray) ? (found[turn] as unknown) : found;
  if (!Array.isArray(list)) return null;
  const ids = list.filter((x): x is number => typeof x === 'number' && Number.isInteger(x));
  return ids.length ? ids : null;
}

function sourceChunks(expected: unknown): unknown[] | null {
  if (typeof expected !== 'object' || expected === null) return null;
  const found = (expected as { source_chunks?: unknown }).source_chunks;
  return Array.isArray(found) && found.length > 0 ? found : null;
}

/** How many turns the ground truth's sources are recorded for: one list per user turn, or 1. */
export function sourceTurns(expected: unknown): number {
  const found = sourceChunks(expected);
  return found?.every(Array.isArray) ? found.length : 1;
}
