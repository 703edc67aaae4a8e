import type { Run } from '@/features/runs/api';
import { runStatusLabel } from '@/features/runs/components/RunStatusBadge';

/** Runs of the comparison that ended with cells never sent: their skipped cases give no verdict. */
export function StoppedRunsNote({ runs }: { runs: { role: string; name: string; run: Run | undefined }[] }) {
  const short = runs.filter(({ run }) => run && ((run.skipped ?? 0) > 0 || run.status === 'cancelled'));
  if (short.length === 0) return null;
  return (
    <div role="status" data-testid="stopped-runs" className="rounded-xl border border-amber-200 bg-amber-50 px-3 py-2 text-sm text-amber-900">
      {short.map(({ role, name, run }) => (
        <p key={role}>
          The {role} run, {name}, is {runStatusLabel[run!.status].toLowerCase()}: {run!.succeeded + run!.failed} of {run!.total} cells were sent and{' '}
          {run!.skipped ?? 0} never were; its skipped cases have no verdict here.
        </p>
      ))}
    </div>
  );
}
