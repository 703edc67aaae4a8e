import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router-dom';
import { Alert, Button, Checkbox, describedBy, Dialog, Field, Input, Label, LoadingRows, Progress, Select, Textarea } from '@/components/ui';
import { errorMessage, fieldErrors } from '@/api/errors';
import type { EventSourceCtor } from '@/api/useEventStream';
import { DIFFICULTIES } from '@/features/datasets/api';
import { useModelConfigs } from '@/features/models/hooks/useModelConfigs';
import { formatMicros, parseDollars } from '@/lib/money';
import { itemText, TERMINAL_JOB, type GenerationEstimate, type GenerationKind, type GenerationRequest, type QuestionsRequest } from '../api';
import { useAcceptGeneration, useDocuments, useEstimateGeneration, useGenerationJob, useGenerationStream, useStartGeneration, useUploadDocument } from '../hooks/useGeneration';

export const GENERATION_TITLES: Record<GenerationKind, string> = {
  questions: 'Generate questions',
  cases: 'Generate synthetic cases',
  conversations: 'Generate conversations',
};

const DESCRIPTIONS: Record<GenerationKind, string> = {
  questions: 'A generator model writes questions on a topic. Review them, then keep the ones you want as a new dataset.',
  cases: 'A generator model writes test cases for your prompt’s variables, edge cases included. Review them before adding.',
  conversations: 'Multi-turn conversations grounded in a document: every turn’s ground truth comes from it.',
};

const DEFAULT_COUNT: Record<GenerationKind, string> = { questions: '10', cases: '50', conversations: '5' };
const COUNT_RANGE: Record<GenerationKind, [number, number]> = { questions: [1, 100], cases: [10, 500], conversations: [1, 50] };

const costText = (micros: number | null | undefined) => (micros === null || micros === undefined ? 'unknown (unpriced model)' : formatMicros(micros));

function intIn(text: string, min: number, max: number): number | null {
  if (!/^\d+$/.test(text.trim())) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** Questions, synthetic cases or grounded conversations: form → live progress → preview → accept. */
export function GenerateDialog({
  projectId,
  kind,
  open,
  onClose,
  EventSourceImpl,
  initialJobId = null,
}: {
  projectId: number;
  kind: GenerationKind;
  /** Reopen an existing job (its progress or preview) instead of the form. */
  initialJobId?: number | null;
  open: boolean;
  onClose: () => void;
  EventSourceImpl?: EventSourceCtor;
}) {
  const navigate = useNavigate();
  const models = useModelConfigs(projectId, false);
  const documents = useDocuments(projectId, open && kind === 'conversations');
  const upload = useUploadDocument(projectId);
  const estimate = useEstimateGeneration(projectId, kind);
  const start = useStartGeneration(projectId, kind);
  const accept = useAcceptGeneration(projectId);
  const [jobId, setJobId] = useState<number | null>(initialJobId);
  const stream = useGenerationStream(projectId, jobId, { EventSourceImpl });
  const job = useGenerationJob(projectId, jobId, stream.state === 'open');

  const [modelId, setModelId] = useState('');
  const [count, setCount] = useState(DEFAULT_COUNT[kind]);
  const [topic, setTopic] = useState('');
  const [instructions, setInstructions] = useState('');
  const [typeTags, setTypeTags] = useState('');
  const [difficulty, setDifficulty] = useState('');
  const [variables, setVariables] = useState('');
  const [diversity, setDiversity] = useState('5');
  const [domainHints, setDomainHints] = useState('');
  const [edgeCases, setEdgeCases] = useState(true);
  const [documentId, setDocumentId] = useState('');
  const [turns, setTurns] = useState('3');
  const [budget, setBudget] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [selected, setSelected] = useState<Set<number> | null>(null);
  const [datasetName, setDatasetName] = useState('');
  const [nameError, setNameError] = useState<string | null>(null);

  function close() {
    setJobId(null);
    setSelected(null);
    setErrors({});
    setDatasetName('');
    setNameError(null);
    estimate.reset();
    start.reset();
    accept.reset();
    upload.reset();
    onClose();
  }

  /** The request body, or null with the field errors set. */
  function build(): GenerationRequest | null {
    const next: Record<string, string> = {};
    const model_id = Number(modelId);
    if (!modelId) next.model_id = 'Choose a generator model.';
    const [lo, hi] = COUNT_RANGE[kind];
    const n = intIn(count, lo, hi);
    if (n === null) next.count = `A whole number from ${lo} to ${hi}.`;
    const b = parseDollars(budget);
    if (!b.ok) next.max_cost_micros = b.error;
    const max_cost_micros = b.ok ? b.micros : null;
    let body: GenerationRequest | null = null;
    if (kind === 'questions') {
      if (!topic.trim()) next.topic = 'Enter a topic.';
      body = {
        model_id,
        count: n ?? 0,
        topic: topic.trim(),
        instructions: instructions.trim() || null,
        type_tags: typeTags.split(',').map((t) => t.trim()).filter(Boolean),
        difficulty: (difficulty || null) as QuestionsRequest['difficulty'],
        max_cost_micros,
      };
    } else if (kind === 'cases') {
      const vars = variables.split(',').map((v) => v.trim()).filter(Boolean);
      if (vars.length === 0) next.variables = 'Name at least one variable.';
      else if (vars.some((v) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v))) next.variables = 'Variable names: letters, digits and _, not first a digit.';
      const d = intIn(diversity, 1, 10);
      if (d === null) next.diversity = 'From 1 to 10.';
      body = { model_id, count: n ?? 0, diversity: d ?? 5, domain_hints: domainHints.trim() || null, variables: vars, include_edge_cases: edgeCases, max_cost_micros };
    } else {
      if (!documentId) next.document_id = 'Upload or choose a document.';
      const t = intIn(turns, 1, 10);
      if (t === null) next.turns = 'From 1 to 10.';
      body = { model_id, document_id: Number(documentId), count: n ?? 0, turns: t ?? 3, max_cost_micros };
    }
    setErrors(next);
    return Object.keys(next).length ? null : body;
  }

  function onEstimate() {
    const body = build();
    if (body) estimate.mutate(body);
  }

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const body = build();
    if (!body) return;
    start.mutate(body, {
      onSuccess: (j) => {
        setJobId(j.id ?? (j as unknown as { job_id: number }).job_id);
        setDatasetName(kind === 'questions' ? topic.trim().slice(0, 100) : kind === 'cases' ? `Synthetic cases` : 'Conversations');
      },
    });
  }

  function onUpload(file: File | null) {
    if (!file) return;
    upload.mutate(file, { onSuccess: (d) => setDocumentId(String(d.id)) });
  }

  const server = fieldErrors(start.error ?? estimate.error);
  const uploadError = upload.isError ? (Object.values(fieldErrors(upload.error))[0] ?? errorMessage(upload.error)) : null;
  const err = (name: string) => errors[name] ?? server[name] ?? null;
  const j = job.data;
  const items = j?.items ?? [];
  const chosen = selected ?? new Set(items.map((_, i) => i));

  function toggle(i: number) {
    const next = new Set(chosen);
    if (next.has(i)) next.delete(i);
    else next.add(i);
    setSelected(next);
  }

  function onAccept(e: FormEvent) {
    e.preventDefault();
    if (!jobId) return;
    if (!datasetName.trim()) {
      setNameError('Name the new dataset.');
      return;
    }
    setNameError(null);
    const indexes = [...chosen].sort((a, b) => a - b);
    accept.mutate(
      { jobId, dataset_name: datasetName.trim(), selected: indexes.length === items.length ? null : indexes },
      {
        onSuccess: (r) => {
          close();
          navigate(`/projects/${projectId}/datasets/${r.dataset_id}`);
        },
      },
    );
  }

  let body;
  if (jobId === null) {
    const modelList = models.data?.items ?? [];
    body = (
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {(start.isError || estimate.isError) && Object.keys(server).length === 0 && <Alert>{errorMessage(start.error ?? estimate.error)}</Alert>}
        <Field id="gen-model" label="Generator model" error={err('model_id')} hint={!models.isPending && modelList.length === 0 ? 'Add a model on the Models tab first.' : undefined}>
          <Select id="gen-model" className="w-full" value={modelId} onChange={(e) => setModelId(e.target.value)} aria-invalid={!!err('model_id') || undefined} aria-describedby={describedBy('gen-model', err('model_id'), modelList.length === 0)} data-autofocus>
            <option value="">{models.isPending ? 'Loading models…' : 'Choose a model'}</option>
            {modelList.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name} ({m.model})
              </option>
            ))}
          </Select>
        </Field>
        {kind === 'questions' && (
          <>
            <Field id="gen-topic" label="Topic" error={err('topic')}>
              <Input id="gen-topic" value={topic} onChange={(e) => setTopic(e.target.value)} invalid={!!err('topic')} aria-describedby={describedBy('gen-topic', err('topic'))} />
            </Field>
            <Field id="gen-instructions" label="Instructions (optional)" error={err('instructions')}>
              <Textarea id="gen-instructions" className="min-h-16" value={instructions} onChange={(e) => setInstructions(e.target.value)} />
            </Field>
            <div className="grid gap-4 sm:grid-cols-2">
              <Field id="gen-types" label="Question types" hint="Comma-separated, such as logic, coding.">
                <Input id="gen-types" value={typeTags} onChange={(e) => setTypeTags(e.target.value)} aria-describedby="gen-types-hint" />
              </Field>
              <Field id="gen-difficulty" label="Difficulty">
                <Select id="gen-difficulty" className="w-full" value={difficulty} onChange={(e) => setDifficulty(e.target.value)}>
                  <option value="">Mixed</option>
                  {DIFFICULTIES.map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </Select>
              </Field>
            </div>
          </>
        )}
        {kind === 'cases' && (
          <>
            <Field id="gen-variables" label="Variables" error={err('variables')} hint="The prompt’s template variables, comma-separated.">
              <Input id="gen-variables" value={variables} onChange={(e) => setVariables(e.target.value)} invalid={!!err('variables')} aria-describedby={describedBy('gen-variables', err('variables'), true)} placeholder="city, question" />
            </Field>
            <Field id="gen-hints" label="Domain hints (optional)">
              <Textarea id="gen-hints" className="min-h-16" value={domainHints} onChange={(e) => setDomainHints(e.target.value)} />
            </Field>
            <div className="grid gap-4 sm:grid-cols-2">
              <Field id="gen-diversity" label="Diversity (1–10)" error={err('diversity')} hint="1: typical inputs only; 10: as varied as possible.">
                <Input id="gen-diversity" inputMode="numeric" value={diversity} onChange={(e) => setDiversity(e.target.value)} invalid={!!err('diversity')} aria-describedby={describedBy('gen-diversity', err('diversity'), true)} />
              </Field>
              <div className="flex items-center gap-2 pt-8">
                <Checkbox id="gen-edge" checked={edgeCases} onChange={(e) => setEdgeCases(e.target.checked)} />
                <Label htmlFor="gen-edge" className="font-normal">
                  Include edge cases
                </Label>
              </div>
            </div>
          </>
        )}
        {kind === 'conversations' && (
          <>
            <Field id="gen-document" label="Document" error={err('document_id') ?? uploadError}>
              <Select id="gen-document" className="w-full" value={documentId} onChange={(e) => setDocumentId(e.target.value)} aria-invalid={!!err('document_id') || undefined} aria-describedby={describedBy('gen-document', err('document_id') ?? uploadError)}>
                <option value="">{documents.isPending ? 'Loading documents…' : documents.isError ? 'Documents could not be loaded' : 'Choose a document'}</option>
                {(documents.data ?? []).map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name}
                    {d.pages ? ` (${d.pages} pages)` : ''}
                  </option>
                ))}
              </Select>
            </Field>
            <div className="space-y-1">
              <Label htmlFor="gen-upload">Or upload a PDF or text file</Label>
              <input
                id="gen-upload"
                type="file"
                accept=".pdf,.txt,.md,application/pdf,text/plain,text/markdown"
                onChange={(e) => onUpload(e.target.files?.[0] ?? null)}
                className="block w-full text-sm file:mr-3 file:h-10 file:rounded-xl file:border file:border-zinc-200 file:bg-white file:px-4 file:text-sm file:font-medium focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-500"
              />
              {upload.isPending && <p role="status" className="text-sm text-zinc-600">Uploading and extracting the text…</p>}
            </div>
            <Field id="gen-turns" label="Turns per conversation (1–10)" error={err('turns')}>
              <Input id="gen-turns" inputMode="numeric" value={turns} onChange={(e) => setTurns(e.target.value)} invalid={!!err('turns')} aria-describedby={describedBy('gen-turns', err('turns'))} />
            </Field>
          </>
        )}
        <div className="grid gap-4 sm:grid-cols-2">
          <Field id="gen-count" label={`How many (${COUNT_RANGE[kind][0]}–${COUNT_RANGE[kind][1]})`} error={err('count')}>
            <Input id="gen-count" inputMode="numeric" value={count} onChange={(e) => setCount(e.target.value)} invalid={!!err('count')} aria-describedby={describedBy('gen-count', err('count'))} />
          </Field>
          <Field id="gen-budget" label="Budget ($, optional)" error={err('max_cost_micros')} hint="Refused before starting if the estimate is higher.">
            <Input id="gen-budget" inputMode="decimal" value={budget} onChange={(e) => setBudget(e.target.value)} invalid={!!err('max_cost_micros')} aria-describedby={describedBy('gen-budget', err('max_cost_micros'), true)} />
          </Field>
        </div>
        {estimate.data && <EstimateBox e={estimate.data} />}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Cancel
          </Button>
          <Button variant="secondary" loading={estimate.isPending} onClick={onEstimate}>
            Estimate cost
          </Button>
          <Button type="submit" loading={start.isPending}>
            Generate
          </Button>
        </div>
      </form>
    );
  } else if (!j) {
    body = job.isError ? <Alert>{errorMessage(job.error)}</Alert> : <LoadingRows label="Starting the job" rows={2} />;
  } else if (!TERMINAL_JOB.includes(j.status)) {
    const pct = j.batches > 0 ? (j.batches_done / j.batches) * 100 : 0;
    body = (
      <div className="space-y-3" data-testid="generation-progress">
        <Progress value={pct} label="Generation progress" />
        <p role="status" aria-live="polite" className="text-sm text-zinc-700">
          {j.status === 'queued' ? 'Queued…' : `Batch ${j.batches_done} of ${j.batches}`} · received {j.received} of {j.requested} · cost so far {costText(j.cost_micros)}
        </p>
        <div className="flex justify-end">
          <Button variant="secondary" onClick={close}>
            Close
          </Button>
        </div>
      </div>
    );
  } else if (j.status === 'failed') {
    body = (
      <div className="space-y-3">
        <Alert>Generation failed: {j.error ?? 'unknown error'}</Alert>
        {j.warnings.length > 0 && <Warnings list={j.warnings} />}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Close
          </Button>
          <Button onClick={() => setJobId(null)}>Back to the form</Button>
        </div>
      </div>
    );
  } else {
    body = (
      <form onSubmit={onAccept} className="space-y-4" noValidate>
        <p role="status" className="text-sm text-zinc-700" data-testid="generation-summary">
          Asked for {j.requested}, got {j.received}. Cost {costText(j.cost_micros)} ({j.tokens_in.toLocaleString('en-US')} tokens in, {j.tokens_out.toLocaleString('en-US')} out).
        </p>
        {j.status === 'partial' && (
          <p role="alert" className="rounded-xl border border-amber-300 bg-amber-50 px-3 py-2 text-sm font-medium text-amber-900" data-testid="generation-partial">
            Partial: {j.error ?? `${j.received} of ${j.requested}`}
          </p>
        )}
        {j.warnings.length > 0 && <Warnings list={j.warnings} />}
        {items.length === 0 ? (
          <Alert>The model’s reply held nothing usable. Try again, or with another model.</Alert>
        ) : (
          <fieldset className="space-y-2">
            <legend className="sr-only">Generated items</legend>
            <div className="flex items-center justify-between text-sm">
              <span>
                {chosen.size} of {items.length} selected
              </span>
              <span className="flex gap-2">
                <Button variant="ghost" size="sm" onClick={() => setSelected(new Set(items.map((_, i) => i)))}>
                  Select all
                </Button>
                <Button variant="ghost" size="sm" onClick={() => setSelected(new Set())}>
                  Select none
                </Button>
              </span>
            </div>
            <ul aria-label="Preview" className="max-h-80 divide-y divide-zinc-200 overflow-auto rounded-xl border border-zinc-200">
              {items.map((it, i) => {
                const t = itemText(j.kind ?? kind, it);
                return (
                  <li key={i} className="flex items-start gap-3 px-3 py-2 text-sm">
                    <Checkbox id={`gen-item-${i}`} className="mt-0.5" checked={chosen.has(i)} onChange={() => toggle(i)} />
                    <label htmlFor={`gen-item-${i}`} className="min-w-0 flex-1">
                      <span className="block text-zinc-900">{t.title}</span>
                      {t.detail && <span className="block text-zinc-500">{t.detail}</span>}
                      {it.edge_case === true && <span className="text-amber-800"> (edge case)</span>}
                    </label>
                  </li>
                );
              })}
            </ul>
          </fieldset>
        )}
        {accept.isError && <Alert>{errorMessage(accept.error)}</Alert>}
        <Field id="gen-dataset-name" label="New dataset name" error={nameError}>
          <Input id="gen-dataset-name" value={datasetName} maxLength={100} onChange={(e) => setDatasetName(e.target.value)} invalid={!!nameError} aria-describedby={describedBy('gen-dataset-name', nameError)} />
        </Field>
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close}>
            Discard
          </Button>
          <Button type="submit" loading={accept.isPending} disabled={chosen.size === 0}>
            Add {chosen.size} to a new dataset
          </Button>
        </div>
      </form>
    );
  }

  return (
    <Dialog open={open} onClose={close} title={GENERATION_TITLES[kind]} description={DESCRIPTIONS[kind]} size="wide">
      {body}
    </Dialog>
  );
}

function Warnings({ list }: { list: string[] }) {
  return (
    <div role="status" className="rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="generation-warnings">
      <p className="font-medium">Warnings</p>
      <ul className="list-disc pl-5">
        {list.map((w, i) => (
          <li key={i}>{w}</li>
        ))}
      </ul>
    </div>
  );
}

function EstimateBox({ e }: { e: GenerationEstimate }) {
  return (
    <div role="status" aria-live="polite" data-testid="generation-estimate" className="space-y-1 rounded-xl border border-zinc-200 bg-zinc-50 p-3 text-sm">
      <p className="font-medium text-zinc-900">
        Estimated cost:{' '}
        {!e.priced || e.low_micros === null || e.high_micros === null
          ? 'unknown (the model has no price)'
          : e.low_micros === e.high_micros
            ? formatMicros(e.low_micros)
            : `${formatMicros(e.low_micros)} – ${formatMicros(e.high_micros)}`}
      </p>
      <p className="text-zinc-600">
        {e.calls} call{e.calls === 1 ? '' : 's'}, about {e.input_tokens.toLocaleString('en-US')} tokens in and {e.output_tokens_low.toLocaleString('en-US')}–{e.output_tokens_high.toLocaleString('en-US')} out.
      </p>
      {e.warnings.map((w, i) => (
        <p key={i} className="text-amber-800">
          {w}
        </p>
      ))}
    </div>
  );
}
