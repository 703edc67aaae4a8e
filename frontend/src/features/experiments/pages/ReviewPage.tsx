import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, Button, ErrorState, Field, Input, Skeleton } from '@/components/ui';
import { errorMessage, isApiError } from '@/api/errors';
import { usePrompt } from '@/features/prompts/hooks/usePrompts';
import { formatMicros } from '@/lib/money';
import { expKeys, useExperiment, useIteration, useReview, useSuggestion } from '../hooks/useExperiments';
import { useQueryClient } from '@tanstack/react-query';
import type { Exemplar } from '../api';
import { bestModelOf, headline, modelsOf } from '../lib/aggregate';
import { reviewKeyAction } from '../lib/keys';
import { withCI } from '../lib/numbers';
import { DiffView } from '../components/DiffView';
import { ExemplarCarousel } from '../components/ExemplarCarousel';
import { CounterexamplesDialog, EditDiffDialog, RejectDialog } from '../components/ReviewDialogs';
import { StatusBadge } from '../components/StatusBadge';
import { NoSuggestion } from '../components/NoSuggestion';

const REFINING_POLL_MS = 1500;

/** FR-PR-002: the refiner's note, its diff, the failing exemplars; approve, reject, edit, add cases. */
export function ReviewPage() {
  const { projectId: p, experimentId: e, number: n } = useParams();
  const projectId = Number(p);
  const experimentId = Number(e);
  const number = Number(n);
  const qc = useQueryClient();
  const navigate = useNavigate();
  const experiment = useExperiment(projectId, experimentId);
  const iteration = useIteration(projectId, experimentId, number, REFINING_POLL_MS);
  const suggestion = useSuggestion(projectId, experimentId, number);
  const prompt = usePrompt(projectId, experiment.data?.prompt_id ?? 0);
  const review = useReview(projectId, experimentId, number);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: expKeys.suggestion(projectId, experimentId, number) });
    void qc.invalidateQueries({ queryKey: expKeys.iteration(projectId, experimentId, number), exact: true });
  };
  const [dialog, setDialog] = useState<'reject' | 'edit' | 'cases' | null>(null);
  const [comment, setComment] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [rejected, setRejected] = useState<number | null>(null); // the suggestion rejected here
  const approveRef = useRef<() => void>(() => undefined);

  // The refiner answered (refining -> awaiting_review, or the loop ended): its suggestion.
  const phase = iteration.data?.status;
  useEffect(() => {
    if (phase && phase !== 'refining') void qc.invalidateQueries({ queryKey: expKeys.suggestion(projectId, experimentId, number) });
  }, [phase, qc, projectId, experimentId, number]);
  const s = suggestion.data ?? null;
  const refining = phase === 'refining';
  // the next suggestion arrived: the rejection's message is about the one before
  useEffect(() => {
    if (rejected !== null && s && s.id !== rejected) {
      setDone(null);
      setRejected(null);
    }
  }, [rejected, s]);
  const pending = s?.status === 'pending' && iteration.data?.status === 'awaiting_review';
  const back = `/projects/${projectId}/experiments/${experimentId}`;

  const approve = () => {
    if (!pending || review.isPending) return;
    review.mutate({ action: 'approve', comment: comment.trim() || undefined }, { onSuccess: () => { setDone('Approved: the next prompt version is saved and the next iteration starts.'); navigate(back); } });
  };
  approveRef.current = approve;

  useEffect(() => {
    function onKey(ev: KeyboardEvent) {
      const a = reviewKeyAction(ev);
      if (!a || !pending) return;
      ev.preventDefault();
      if (a === 'approve') approveRef.current();
      else if (a === 'reject') setDialog('reject');
      else setDialog('edit');
    }
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [pending]);

  if (iteration.isPending || experiment.isPending || suggestion.isPending) return <Skeleton className="h-64 w-full" />;
  if (iteration.isError) return <ErrorState title="Could not load the iteration" error={iteration.error} onRetry={() => iteration.refetch()} retrying={iteration.isFetching} />;
  if (experiment.isError) return <ErrorState title="Could not load the experiment" error={experiment.error} onRetry={() => experiment.refetch()} retrying={experiment.isFetching} />;
  const it = iteration.data;
  const version = prompt.data?.versions.find((v) => v.id === it.prompt_version_id) ?? null;
  const top = headline(modelsOf(it), bestModelOf(it));
  const reviewError = review.isError && !dialog ? (isApiError(review.error) && review.error.status === 409 ? 'Someone else reviewed this suggestion first. Reload to see the outcome.' : errorMessage(review.error)) : null;

  return (
    <div className="min-w-0 space-y-4">
      <p className="text-sm">
        <Link to={back} className="text-zinc-600 hover:text-zinc-900">
          ← {experiment.data.name}
        </Link>
      </p>
      <h2 className="flex flex-wrap items-center gap-2 text-lg font-semibold">
        Review refinement — iteration {it.number} <StatusBadge status={it.status} />
      </h2>
      {(!s || refining) && (
        <Alert tone="info">
          <span role="status" data-testid="refining">
            {refining ? 'The refiner is proposing a new suggestion; it appears here when ready.' : 'No suggestion yet: the refiner has not finished.'}
          </span>
        </Alert>
      )}
      {s?.status === 'none' && <NoSuggestion suggestion={s} projectId={projectId} experimentId={experimentId} promptId={experiment.data.prompt_id ?? null} />}
      {s && s.status !== 'pending' && s.status !== 'none' && <Alert tone="info">This suggestion was {s.status}{s.reject_reason ? `: ${s.reject_reason}` : ''}.</Alert>}
      {done && <Alert tone="success">{done}</Alert>}
      {it.weakest_criteria.length > 0 && (
        <section aria-label="Weak criteria" className="text-sm text-zinc-700">
          <p>The refiner proposes these changes to improve:</p>
          <ul className="list-disc pl-5">
            {it.weakest_criteria.map((c) => {
              const ci = top?.all.criteria[c];
              return <li key={c}>{ci ? `${c} (currently ${withCI(ci.mean, ci.low, ci.high)})` : c}</li>;
            })}
          </ul>
        </section>
      )}
      {s?.note && (
        <section aria-label="Explanation" className="space-y-1 rounded-xl border border-zinc-200 bg-white p-3">
          <h3 className="text-sm font-semibold">Explanation</h3>
          <p className="whitespace-pre-wrap break-words text-sm" data-testid="suggestion-note">
            {s.note}
          </p>
          <p className="text-sm text-zinc-500">Refinement cost {formatMicros(s.cost_micros)}.</p>
        </section>
      )}
      {s?.diff && (
        <section aria-label="Changes" className="space-y-1">
          <h3 className="text-sm font-semibold">Changes (diff)</h3>
          <DiffView diff={s.diff} />
        </section>
      )}
      {s && <ExemplarCarousel items={(s.exemplars ?? []) as unknown as Exemplar[]} />}
      {pending && (
        <section aria-label="Actions" className="space-y-3 rounded-xl border border-zinc-200 bg-white p-3">
          <Field id="review-comment" label="Comment (optional, audited)">
            <Input id="review-comment" value={comment} onChange={(ev) => setComment(ev.target.value)} />
          </Field>
          <div className="flex flex-wrap gap-2">
            <Button onClick={approve} loading={review.isPending && review.variables?.action === 'approve'} aria-keyshortcuts=".">
              ✓ Approve
            </Button>
            <Button variant="danger" onClick={() => setDialog('reject')} aria-keyshortcuts=",">
              ✗ Reject
            </Button>
            <Button variant="secondary" onClick={() => setDialog('edit')} aria-keyshortcuts="E">
              ✏️ Edit diff
            </Button>
            <Button variant="secondary" onClick={() => setDialog('cases')}>
              + Add counterexamples
            </Button>
          </div>
          <p className="text-sm text-zinc-500">
            Keyboard: <kbd>.</kbd> approve, <kbd>,</kbd> reject, <kbd>E</kbd> edit (not while typing in a field).
          </p>
          {reviewError && <Alert>{reviewError}</Alert>}
        </section>
      )}
      <RejectDialog
        open={dialog === 'reject'}
        onClose={() => setDialog(null)}
        onSubmit={(reason) =>
          review.mutateAsync({ action: 'reject', reason }).then(() => {
            setDone('Rejected: the reason is recorded and the refiner proposes again, told why.');
            setRejected(s?.id ?? null);
            refresh();
          })
        }
      />
      {dialog === 'edit' && (
        <EditDiffDialog
          open
          onClose={() => setDialog(null)}
          base={version?.template ?? null}
          initial={s?.diff ?? ''}
          onSubmit={(v) =>
            review.mutateAsync({ action: 'edit', diff: v.diff, comment: v.comment || undefined }).then(() => {
              setDone('The edited diff passed the guardrails and replaces the suggestion: approve it to create the next version.');
              refresh();
            })
          }
        />
      )}
      <CounterexamplesDialog
        open={dialog === 'cases'}
        onClose={() => setDialog(null)}
        variables={version?.variables ?? []}
        onSubmit={(cases) => review.mutateAsync({ action: 'counterexamples', cases }).then(() => setDone(`${cases.length} counterexample${cases.length === 1 ? '' : 's'} added for the next iteration.`))}
      />
    </div>
  );
}
