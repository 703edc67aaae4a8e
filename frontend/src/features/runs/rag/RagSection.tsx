import { Link } from 'react-router-dom';
import { Alert, buttonClasses, Card, CardContent, CardHeader, CardTitle, Checkbox, describedBy, Field, Input, Label, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import { useDocuments, useUploadDocument } from '@/features/generation/hooks/useGeneration';
import type { FormErrors, RagForm } from '../config';
import { DEFAULT_RAG_TEMPLATE, RAG_PLACEHOLDERS, RAG_TEMPLATE_MAX, RAG_TOP_K_MAX } from './context';

/**
 * New run → "Answer from documents": per question the top-k chunks of the chosen documents
 * (BM25) go into the prompt through the template; off, the cases are sent as they are.
 */
export function RagSection({
  projectId,
  value,
  onChange,
  errors,
  traces,
}: {
  projectId: number;
  value: RagForm;
  onChange: (rag: RagForm) => void;
  errors: FormErrors;
  traces: boolean;
}) {
  const documents = useDocuments(projectId, value.enabled && !traces);
  const upload = useUploadDocument(projectId);
  const set = (patch: Partial<RagForm>) => onChange({ ...value, ...patch });
  const err = (k: 'document_ids' | 'top_k' | 'template') => errors[`rag.${k}`] ?? null;
  const docs = documents.data ?? [];
  const toggle = (id: number, on: boolean) =>
    set({ documentIds: on ? [...value.documentIds.filter((d) => d !== id), id] : value.documentIds.filter((d) => d !== id) });
  const uploadError = upload.isError ? (Object.values(fieldErrors(upload.error))[0] ?? errorMessage(upload.error)) : null;

  return (
    <Card>
      <CardHeader>
        <CardTitle>Answer from documents</CardTitle>
      </CardHeader>
      <CardContent className="space-y-4">
        <div className="flex items-start gap-2">
          <Checkbox id="run-rag" checked={value.enabled && !traces} disabled={traces} onChange={(e) => set({ enabled: e.target.checked })} aria-describedby="run-rag-hint" />
          <div>
            <Label htmlFor="run-rag" className="font-normal">
              Retrieve context from the project&apos;s documents for each question
            </Label>
            <p id="run-rag-hint" className="text-sm text-zinc-500">
              {traces
                ? 'Not for a traces dataset: its outputs are recorded, not generated.'
                : 'The chunks each answer was given are kept with it, and groundedness is judged against them.'}
            </p>
          </div>
        </div>
        {value.enabled && !traces && (
          <>
            <fieldset className="space-y-2" aria-describedby={err('document_ids') ? 'run-rag-documents-error' : undefined}>
              <legend className="text-sm font-medium">Documents</legend>
              {documents.isPending ? (
                <p className="text-sm text-zinc-600" role="status">
                  Loading documents…
                </p>
              ) : documents.isError ? (
                <Alert>Documents could not be loaded: {errorMessage(documents.error)}</Alert>
              ) : docs.length === 0 ? (
                <div className="rounded-xl border border-dashed border-zinc-300 p-3 text-sm text-zinc-700" data-testid="rag-no-documents">
                  <p>This project has no documents yet. Upload one here, or from Datasets → Generate.</p>
                  <Link to={`/projects/${projectId}/datasets`} className={buttonClasses('secondary', 'sm') + ' mt-2'}>
                    Go to datasets
                  </Link>
                </div>
              ) : (
                <div className="grid gap-2 sm:grid-cols-2">
                  {docs.map((d) => (
                    <div key={d.id} className="flex min-w-0 items-center gap-2">
                      <Checkbox id={`run-rag-doc-${d.id}`} checked={value.documentIds.includes(d.id)} onChange={(e) => toggle(d.id, e.target.checked)} />
                      <Label htmlFor={`run-rag-doc-${d.id}`} className="min-w-0 break-all font-normal">
                        {d.name} <span className="text-zinc-500">({d.chunks} {d.chunks === 1 ? 'chunk' : 'chunks'})</span>
                      </Label>
                    </div>
                  ))}
                </div>
              )}
              {err('document_ids') && (
                <p id="run-rag-documents-error" className="text-sm text-red-700" role="alert">
                  {err('document_ids')}
                </p>
              )}
              <div className="space-y-1">
                <Label htmlFor="run-rag-upload" className="font-normal">
                  Upload a PDF, Markdown or text file
                </Label>
                <input
                  id="run-rag-upload"
                  type="file"
                  accept=".pdf,.txt,.md,application/pdf,text/plain,text/markdown"
                  onChange={(e) => {
                    const file = e.target.files?.[0];
                    if (file) upload.mutate(file, { onSuccess: (d) => set({ documentIds: [...value.documentIds.filter((x) => x !== d.id), d.id] }) });
                  }}
                  className="block w-full max-w-full text-sm file:mr-3 file:h-10 file:rounded-xl file:border file:border-zinc-200 file:bg-white file:px-4 file:text-sm file:font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500"
                />
                {upload.isPending && (
                  <p role="status" className="text-sm text-zinc-600">
                    Uploading, splitting into chunks and indexing…
                  </p>
                )}
                {uploadError && <p className="text-sm text-red-700">{uploadError}</p>}
              </div>
            </fieldset>
            <Field id="run-rag-top-k" label="Chunks per question (top-k)" error={err('top_k')} hint={`Best first by BM25, 1 to ${RAG_TOP_K_MAX}.`}>
              <Input
                id="run-rag-top-k"
                inputMode="numeric"
                className="max-w-32"
                value={value.topK}
                invalid={!!err('top_k')}
                aria-describedby={describedBy('run-rag-top-k', err('top_k'), true)}
                onChange={(e) => set({ topK: e.target.value })}
              />
            </Field>
            <Field
              id="run-rag-template"
              label="Prompt template"
              error={err('template')}
              hint={
                <>
                  Replaces each question&apos;s user message. Placeholders (both required):{' '}
                  {RAG_PLACEHOLDERS.map((p, i) => (
                    <span key={p.name}>
                      {i > 0 && '; '}
                      <code className="rounded bg-zinc-100 px-1">{p.name}</code> {p.means}
                    </span>
                  ))}
                  .
                </>
              }
            >
              <Textarea
                id="run-rag-template"
                rows={7}
                maxLength={RAG_TEMPLATE_MAX}
                className="font-mono"
                value={value.template}
                invalid={!!err('template')}
                aria-describedby={describedBy('run-rag-template', err('template'), true)}
                onChange={(e) => set({ template: e.target.value })}
              />
            </Field>
            {value.template !== DEFAULT_RAG_TEMPLATE && (
              <button type="button" className={buttonClasses('ghost', 'sm')} onClick={() => set({ template: DEFAULT_RAG_TEMPLATE })}>
                Restore the default template
              </button>
            )}
          </>
        )}
      </CardContent>
    </Card>
  );
}
