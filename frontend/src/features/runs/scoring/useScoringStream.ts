import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { qk } from '@/api/queryKeys';
import type { EventSourceCtor } from '@/api/useEventStream';
import { runPath } from '../api';

export const SCORED = 'run.scored';
export const SCORING_FINISHED = 'run.scoring_finished';

/** Where a scoring job is: scores written so far, and how it ended. */
export interface ScoringProgress {
  state: 'idle' | 'connecting' | 'running' | 'finished' | 'lost';
  scores: number;
  /** budget_exceeded: the caps had no room for the judges of the next outputs. */
  stopped: string | null;
}

const IDLE: ScoringProgress = { state: 'idle', scores: 0, stopped: null };

export function scoringEventsUrl(projectId: number, runId: number, after: string) {
  return `${runPath(projectId, runId)}/scorers/events?last_event_id=${encodeURIComponent(after)}`;
}

/**
 * Follows one scoring job on the run's stream, from `after` (the POST's events_after):
 * run.scored per page, then run.scoring_finished, when the project's cached data is
 * refreshed so the new scores appear. null `after`: not following.
 */
export function useScoringStream(
  projectId: number,
  runId: number,
  after: string | null,
  EventSourceImpl?: EventSourceCtor,
): ScoringProgress {
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<ScoringProgress>(IDLE);
  useEffect(() => {
    if (after === null) {
      setProgress(IDLE);
      return;
    }
    const Impl = EventSourceImpl ?? (typeof EventSource === 'undefined' ? undefined : (EventSource as unknown as EventSourceCtor));
    if (!Impl) {
      setProgress({ state: 'lost', scores: 0, stopped: null });
      return;
    }
    setProgress({ state: 'connecting', scores: 0, stopped: null });
    const source = new Impl(scoringEventsUrl(projectId, runId, after), { withCredentials: true });
    const read = (ev: MessageEvent): { scores?: number; stopped?: string } => {
      try {
        return JSON.parse(String(ev.data)) as { scores?: number; stopped?: string };
      } catch {
        return {};
      }
    };
    source.onopen = () => setProgress((p) => (p.state === 'connecting' ? { ...p, state: 'running' } : p));
    source.addEventListener(SCORED, (ev) => {
      const data = read(ev);
      setProgress((p) => ({ state: 'running', scores: data.scores ?? p.scores, stopped: data.stopped ?? p.stopped }));
    });
    source.addEventListener(SCORING_FINISHED, (ev) => {
      const data = read(ev);
      source.close();
      setProgress((p) => ({ state: 'finished', scores: data.scores ?? p.scores, stopped: data.stopped ?? null }));
      void queryClient.invalidateQueries({ queryKey: qk.project(projectId) });
    });
    source.onerror = () => {
      if (source.readyState === 2) setProgress((p) => (p.state === 'finished' ? p : { ...p, state: 'lost' }));
    };
    return () => source.close();
  }, [projectId, runId, after, EventSourceImpl, queryClient]);
  return progress;
}
