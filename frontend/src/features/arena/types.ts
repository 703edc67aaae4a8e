import type { components } from '@/api/schema';

// EvalArena's API shapes, from the generated OpenAPI types.
type S = components['schemas'];

export type Tab = 'rules' | 'judge';
export type TargetSet = 'dev' | 'test';
export type ChallengeSummary = S['ArenaChallengeCard'];
export type Challenge = S['ArenaChallenge'];
export type ArenaMessage = S['ArenaMessage'];
export type DevTrace = S['ArenaDevTrace'];
export type Problem = S['ArenaProblem'];
export type TraceResult = S['ArenaTraceResult'];
export type Summary = S['ArenaSummary'];
export type AttemptDiff = S['ArenaDiff'];
export type ReportEntry = S['ArenaReportEntry'];
export type Critique = S['ArenaCritique'];
export type Attempt = S['ArenaAttempt'];
export type AttemptBody = S['ArenaAttemptBody'];
export type MissKind = 'missed_failure' | 'false_alarm';

/** A disagreement of the eval with a trace's label, and where to look in the transcript. */
export interface Miss {
  trace_id: string;
  kind: MissKind;
  message_index: number | null;
  severity: string | null;
  clause: string | null;
}
