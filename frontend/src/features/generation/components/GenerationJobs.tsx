import { Link } from 'react-router-dom';
import { Badge, Button, Table, TBody, TD, TH, THead, TR, type BadgeTone } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { relativeTime } from '@/lib/format';
import { formatMicros } from '@/lib/money';
import { REVIEWABLE_JOB, type JobStatus, type JobSummary } from '../api';
import { useGenerationJobs } from '../hooks/useGeneration';

const TONES: Record<JobStatus, BadgeTone> = { queued: 'neutral', running: 'indigo', succeeded: 'success', partial: 'warning', failed: 'danger', cancelled: 'neutral' };

/** Recent generation jobs (kept a week): reopen one to follow it or review its preview. */
export function GenerationJobs({ projectId, canEdit, onOpen }: { projectId: number; canEdit: boolean; onOpen: (job: JobSummary) => void }) {
  const jobs = useGenerationJobs(projectId);
  const items = jobs.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section aria-labelledby="generation-jobs-heading" className="space-y-2">
      <h2 id="generation-jobs-heading" className="text-base font-semibold text-zinc-900">
        Recent generation jobs
      </h2>
      <Table aria-label="Generation jobs">
        <THead>
          <TR>
            <TH>Kind</TH>
            <TH>Status</TH>
            <TH className="text-right">Received</TH>
            <TH className="text-right">Cost</TH>
            <TH>Started</TH>
            <TH>
              <span className="sr-only">Actions</span>
            </TH>
          </TR>
        </THead>
        <TBody>
          {items.map((j) => (
            <TR key={j.id}>
              <TD className="capitalize">{j.kind}</TD>
              <TD>
                <Badge tone={TONES[j.status]}>{j.status}</Badge>
                {j.error && (j.status === 'partial' || j.status === 'failed' || j.status === 'cancelled') && (
                  <p className="mt-1 max-w-xs text-sm text-zinc-600" data-testid="generation-job-reason">
                    {j.error}
                  </p>
                )}
              </TD>
              <TD className="text-right tabular-nums">
                {j.received} of {j.requested}
              </TD>
              <TD className="text-right tabular-nums">{j.cost_micros === null ? 'unknown' : formatMicros(j.cost_micros)}</TD>
              <TD className="whitespace-nowrap text-zinc-600">{relativeTime(j.created_at)}</TD>
              <TD>
                <div className="flex justify-end gap-2">
                  {j.dataset_ids.map((id) => (
                    <Link key={id} to={`/projects/${projectId}/datasets/${id}`} className={cn('rounded-xl text-sm text-indigo-700 hover:underline', focusRing)}>
                      Dataset #{id}
                    </Link>
                  ))}
                  {canEdit && (
                    <Button variant="ghost" size="sm" aria-label={`Open generation job ${j.id}`} onClick={() => onOpen(j)}>
                      {REVIEWABLE_JOB.includes(j.status) ? 'Review' : 'Open'}
                    </Button>
                  )}
                </div>
              </TD>
            </TR>
          ))}
        </TBody>
      </Table>
    </section>
  );
}
