import { useMemo } from 'react';
import { useDocuments } from '@/features/generation/hooks/useGeneration';

/** A document's name by id (the project's documents, fetched once and shared). */
export function useDocumentNames(projectId: number, enabled = true): (documentId: number) => string {
  const docs = useDocuments(projectId, enabled);
  const names = useMemo(() => new Map((docs.data ?? []).map((d) => [d.id, d.name])), [docs.data]);
  return (id) => names.get(id) ?? `document #${id}`;
}
