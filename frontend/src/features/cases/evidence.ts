import type { CaseView, Score } from './api';

/** evalarena Appendix B: evidence is a warning (amber) or a violation (red); what a passing
 * check points at with no severity (a match it found) is neither, it is support (green). */
export type EvidenceLevel = 'ok' | 'warn' | 'bad';

export interface Finding {
  messageIndex: number;
  level: EvidenceLevel;
  /** The rule or criterion it supports. */
  label: string;
  scorer: string;
  severity: string | null;
  /** What the scorer said: the rule's message, else the score's rationale. */
  message: string;
  text: string;
  start: number | null;
  end: number | null;
}

export interface TraceMessage {
  role: string;
  content?: unknown;
  name?: unknown;
  tool_call_id?: unknown;
  tool_calls?: unknown;
}

interface RuleDetail {
  id?: unknown;
  severity?: unknown;
  message?: unknown;
}

function ruleOf(score: Score, label: string): RuleDetail | undefined {
  const rules = (score.details as { rules?: unknown }).rules;
  if (!Array.isArray(rules)) return undefined;
  return rules.find((r): r is RuleDetail => typeof r === 'object' && r !== null && (r as RuleDetail).id === label);
}

/** low is a warning; high, critical (and an unrated failure) are violations; a passing check's evidence is support. */
export function levelOf(severity: string | null | undefined, passed: boolean | null | undefined): EvidenceLevel {
  if (severity === 'low' || severity === 'medium' || severity === 'warning') return 'warn';
  if (severity) return 'bad';
  return passed === false ? 'bad' : passed === true ? 'ok' : 'warn';
}

/** Every piece of evidence that points at a message, from the given scores. */
export function findingsOf(scores: Score[]): Finding[] {
  const out: Finding[] = [];
  for (const score of scores) {
    for (const e of score.evidence) {
      if (e.message_index == null) continue;
      const rule = ruleOf(score, e.label);
      const severity = typeof rule?.severity === 'string' ? rule.severity : (score.severity ?? null);
      out.push({
        messageIndex: e.message_index,
        level: levelOf(severity, score.passed),
        label: e.label || score.scorer_name,
        scorer: score.scorer_name,
        severity,
        message: typeof rule?.message === 'string' ? rule.message : score.rationale,
        text: e.text,
        start: e.start ?? null,
        end: e.end ?? null,
      });
    }
  }
  return out.sort((a, b) => a.messageIndex - b.messageIndex);
}

function asMessages(value: unknown): TraceMessage[] | null {
  if (!Array.isArray(value)) return null;
  return value.filter((m): m is TraceMessage => typeof m === 'object' && m !== null && typeof (m as TraceMessage).role === 'string');
}

/**
 * The messages a scorer's evidence indexes: a trace case's recorded trace; otherwise (when
 * the API gave no `conversation` for the output) the case's input messages, or its question
 * as a user message, followed by the output as the assistant's reply.
 */
export function conversationOf(view: CaseView, outputText: string | null | undefined): TraceMessage[] | null {
  const trace = asMessages((view.case.trace as { messages?: unknown } | null)?.messages);
  if (trace) return trace;
  if (outputText == null) return null;
  const input = view.case.input as { messages?: unknown; question?: unknown };
  const given = asMessages(input.messages);
  const before = given ?? (typeof input.question === 'string' ? [{ role: 'user', content: input.question }] : []);
  return [...before, { role: 'assistant', content: outputText }];
}
