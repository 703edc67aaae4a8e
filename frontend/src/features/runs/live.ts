// Live-run helpers: a Progress view of a run (before /progress answers), durations and ETA.
import { isTerminal } from '@/api/types';
import type { Progress, Run } from './api';

/** The run's own counters as a Progress payload, so the page renders before /progress answers. */
export function progressFromRun(run: Run): Progress {
  return {
    run_id: run.id,
    status: run.status,
    total: run.total,
    done: run.succeeded + run.failed,
    succeeded: run.succeeded,
    failed: run.failed,
    skipped: run.skipped ?? 0,
    spent_micros: run.spent_micros ?? 0,
    judge_spent_micros: run.judge_spent_micros ?? 0,
    reserved_micros: run.reserved_micros ?? 0,
    budget_micros: run.budget_micros ?? null,
    project_budget_micros: null,
    project_spent_micros: 0,
    tokens_in: run.tokens_in ?? 0,
    tokens_out: run.tokens_out ?? 0,
    elapsed_s: run.started_at
      ? Math.max(0, ((run.finished_at ? new Date(run.finished_at).getTime() : Date.now()) - new Date(run.started_at).getTime()) / 1000)
      : 0,
    eta_s: null,
    started_at: run.started_at,
    finished_at: run.finished_at,
    error: run.error ?? null,
    errors: {},
    targets: (run.targets ?? []).map((t) => ({
      target_id: t.id,
      label: t.label,
      total: t.total,
      succeeded: t.succeeded,
      failed: t.failed,
      skipped: t.skipped,
      spent_micros: t.spent_micros,
      tokens_in: t.tokens_in,
      tokens_out: t.tokens_out,
      errors: {},
    })),
  };
}

/** "2m 34s", "1h 05m", "12s". */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/**
 * Elapsed seconds now: the server's elapsed_s plus the time since it was received while the
 * run is running; from started_at/finished_at when the server gave none.
 */
export function elapsedNow(p: Progress, receivedAt: number, now: number): number | null {
  const running = p.status === 'running';
  if (p.elapsed_s !== null && p.elapsed_s !== undefined) {
    return p.elapsed_s + (running ? Math.max(0, (now - receivedAt) / 1000) : 0);
  }
  if (!p.started_at) return null;
  const start = new Date(p.started_at).getTime();
  const end = p.finished_at ? new Date(p.finished_at).getTime() : running ? now : null;
  return end === null ? null : Math.max(0, (end - start) / 1000);
}

/** Seconds left: the server's eta_s counted down locally since it arrived; null when unknown or not running. */
export function etaNow(p: Progress, receivedAt: number, now: number): number | null {
  if (p.status !== 'running' || p.eta_s === null || p.eta_s === undefined) return null;
  return Math.max(0, p.eta_s - Math.max(0, (now - receivedAt) / 1000));
}

/** Cells sent (succeeded or failed); skipped cells were never sent and are not done. */
export { sentOf } from '@/lib/rates';

/** A run that ended with cells never sent (cancelled, out of budget): it must not look complete. */
export function stoppedShort(p: Pick<Progress, 'status' | 'skipped'>): boolean {
  return isTerminal(p.status) && (p.status === 'cancelled' || p.status === 'budget_exceeded' || (p.skipped ?? 0) > 0);
}

export function percentOf(part: number, whole: number): number {
  if (!whole || whole <= 0) return 0;
  return Math.min(100, Math.floor((Math.max(0, part) / whole) * 100));
}
