import type { Finding, TraceMessage } from '@/features/cases/evidence';
import type { ArenaMessage, Attempt, Challenge, DevTrace, Miss, MissKind, Summary, Tab } from './types';

/** The text the editor opens with: the caller's saved draft, else the challenge's start. */
export function initialText(challenge: Challenge, tab: Tab): string {
  const state = challenge.tabs[tab];
  return typeof state.draft === 'string' ? state.draft : state.starting_text;
}

/** The disagreements of a dev run, each with the message to open (its first evidence). */
export function missesOf(attempt: Attempt | null | undefined, contract: string[]): Miss[] {
  return (attempt?.results ?? [])
    .filter((r) => r.miss)
    .map((r) => ({
      trace_id: r.trace_id,
      kind: r.miss as MissKind,
      message_index: r.evidence.find((e) => e.message_index != null)?.message_index ?? null,
      severity: r.label_severity ?? r.severity ?? null,
      clause: r.violated_clause != null ? (contract[r.violated_clause] ?? null) : null,
    }));
}

/** Where a miss opens the transcript: its evidence, else (a missed failure: the eval said
 * nothing) the agent's last message, where a breach usually shows. */
export function jumpIndex(miss: Miss, trace: DevTrace | undefined): number | null {
  if (miss.message_index != null) return miss.message_index;
  if (!trace) return null;
  for (let i = trace.messages.length - 1; i >= 0; i--) if (trace.messages[i].role === 'assistant') return i;
  return trace.messages.length ? trace.messages.length - 1 : null;
}

/** A trace message as TraceView reads it: a tool result's tool is its `name`. */
export function toTraceMessage(m: ArenaMessage): TraceMessage {
  const tool = m.metadata && typeof m.metadata.tool_name === 'string' ? m.metadata.tool_name : undefined;
  // Arguments as "key: value" lines: the fields a reader checks, not a JSON blob.
  const calls = m.tool_calls?.map((c) => ({
    name: c.name,
    arguments: keyFields(c.arguments)
      .map(([k, v]) => (k ? `${k}: ${v}` : v))
      .join('\n'),
  }));
  return { role: m.role, content: m.content, name: tool, tool_calls: calls };
}

/** The transcript highlights for one trace from an attempt's dev results. */
export function findingsFor(attempt: Attempt | null | undefined, traceId: string): Finding[] {
  const result = attempt?.results?.find((r) => r.trace_id === traceId);
  if (!result) return [];
  return result.evidence
    .filter((e) => e.message_index != null)
    .map((e) => ({
      messageIndex: e.message_index as number,
      level: e.level,
      label: e.label,
      scorer: attempt?.tab === 'judge' ? 'Judge' : 'Rules',
      severity: result.severity ?? null,
      message: e.detail,
      text: '',
      start: e.start ?? null,
      end: e.end ?? null,
    }))
    .sort((a, b) => a.messageIndex - b.messageIndex);
}

export const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

/** "Pass" in one line: the learner's eval is scored, not the agent. */
export function passReading(summary: Summary | null, threshold: number): string {
  const base = `A trace passes when your eval agrees with its label; Ready needs ≥ ${pct(threshold)} agreement and no critical failure let through.`;
  if (!summary) return base;
  return `${summary.passed} of ${summary.total} traces agree with their label. ${base}`;
}

/** Why the gate is blocked, in words (empty when ready). */
export function blockedBecause(summary: Summary, threshold: number): string[] {
  if (summary.ready) return [];
  const out: string[] = [];
  if (summary.pass_rate < threshold) out.push(`pass rate ${pct(summary.pass_rate)} is below ${pct(threshold)}`);
  if (summary.critical_count > 0)
    out.push(`${summary.critical_count} critical failure${summary.critical_count === 1 ? '' : 's'} let through`);
  return out;
}

export function splitMisses(misses: Miss[] | null | undefined): { missed: Miss[]; falseAlarms: Miss[] } {
  const all = misses ?? [];
  return { missed: all.filter((m) => m.kind === 'missed_failure'), falseAlarms: all.filter((m) => m.kind === 'false_alarm') };
}

/** Tool-call arguments as key fields ("order_id: 1182"); non-objects as their JSON. */
export function keyFields(args: unknown): Array<[string, string]> {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return [['', value as string]];
    }
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  return value == null ? [] : [['', JSON.stringify(value)]];
}

/** The element id of a transcript message (TraceView's anchor), for scroll-to. */
export const messageId = (traceId: string, index: number) => `arena-${traceId}-message-${index}`;
export const tracePrefix = (traceId: string) => `arena-${traceId}`;

/** Scrolls the transcript to a message and focuses it, once it is rendered. */
export function scrollToMessage(traceId: string, index: number, tries = 20) {
  const el = document.getElementById(messageId(traceId, index));
  if (el) {
    el.scrollIntoView?.({ block: 'center', behavior: 'smooth' });
    el.focus({ preventScroll: true });
    // A visible mark on the target until focus moves on (a missed failure has no highlight;
    // focus-visible does not show after a mouse click).
    el.style.outline = '2px solid rgb(99 102 241)';
    el.style.outlineOffset = '2px';
    el.addEventListener('blur', () => ((el.style.outline = ''), (el.style.outlineOffset = '')), { once: true });
    return;
  }
  if (tries > 0) requestAnimationFrame(() => scrollToMessage(traceId, index, tries - 1));
}
