import { useRef, type ReactNode } from 'react';
import { Badge, type BadgeTone } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import type { EvidenceLevel, Finding, TraceMessage } from '../evidence';

const roleTone: Record<string, BadgeTone> = {
  system: 'neutral',
  user: 'indigo',
  assistant: 'success',
  tool: 'warning',
};

/** evalarena Appendix B: warn bg-amber-50 border-amber-200, bad bg-red-50 border-red-200,
 * plus a thick left border and a labelled icon so colour is never the only cue. */
const levelStyle: Record<EvidenceLevel, { box: string; tag: string; icon: string; name: string }> = {
  ok: {
    box: 'border-emerald-200 bg-emerald-50 border-l-4 border-l-emerald-600',
    tag: 'border-emerald-300 bg-white text-emerald-900',
    icon: '✓',
    name: 'Passed',
  },
  warn: {
    box: 'border-amber-200 bg-amber-50 border-l-4 border-l-amber-500',
    tag: 'border-amber-300 bg-white text-amber-900',
    icon: '⚠',
    name: 'Warning',
  },
  bad: {
    box: 'border-red-200 bg-red-50 border-l-4 border-l-red-600',
    tag: 'border-red-300 bg-white text-red-900',
    icon: '✖',
    name: 'Violation',
  },
};

function text(value: unknown): string {
  if (value == null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

interface ToolCall {
  id: string | null;
  name: string;
  args: string;
}

function toolCalls(message: TraceMessage): ToolCall[] {
  if (!Array.isArray(message.tool_calls)) return [];
  return message.tool_calls
    .filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null)
    .map((c) => {
      const fn = typeof c.function === 'object' && c.function !== null ? (c.function as Record<string, unknown>) : {};
      return {
        id: typeof c.id === 'string' ? c.id : null,
        name: text(c.name ?? fn.name) || 'unnamed tool',
        args: text(c.arguments ?? fn.arguments ?? c.args),
      };
    });
}

/** The content with the evidence spans marked (non-overlapping, in order). */
function Marked({ content, findings }: { content: string; findings: Finding[] }) {
  const spans = findings
    .filter((f) => f.start != null && f.end != null && f.start < f.end && f.end <= content.length)
    .sort((a, b) => (a.start ?? 0) - (b.start ?? 0));
  const parts: ReactNode[] = [];
  let at = 0;
  for (const f of spans) {
    const start = f.start ?? 0;
    const end = f.end ?? 0;
    if (start < at) continue;
    parts.push(content.slice(at, start));
    parts.push(
      <mark key={`${start}-${f.label}`} className={cn('rounded px-0.5 underline decoration-2', f.level === 'bad' ? 'bg-red-200 text-red-950' : f.level === 'ok' ? 'bg-emerald-200 text-emerald-950' : 'bg-amber-200 text-amber-950')}>
        {content.slice(start, end)}
      </mark>,
    );
    at = end;
  }
  parts.push(content.slice(at));
  return <>{parts}</>;
}

export const messageAnchor = (prefix: string, index: number) => `${prefix}-message-${index}`;

/**
 * A conversation or agent trace: one card per message with its role badge, tool calls
 * (name and arguments) and tool results (with the call they answer), and the messages a
 * scorer pointed at highlighted with the scorer's message. The evidence list above jumps
 * to (and focuses) each highlighted message.
 */
export function TraceView({
  messages,
  findings,
  idPrefix = 'trace',
  hideEvidenceNav = false,
}: {
  messages: TraceMessage[];
  findings: Finding[];
  idPrefix?: string;
  hideEvidenceNav?: boolean;
}) {
  const list = useRef<HTMLOListElement>(null);
  const callNames = new Map<string, string>();
  for (const m of messages) for (const c of toolCalls(m)) if (c.id) callNames.set(c.id, c.name);
  const byMessage = new Map<number, Finding[]>();
  for (const f of findings) byMessage.set(f.messageIndex, [...(byMessage.get(f.messageIndex) ?? []), f]);

  const jump = (index: number) => {
    const el = list.current?.querySelector<HTMLElement>(`#${CSS.escape(messageAnchor(idPrefix, index))}`);
    el?.scrollIntoView?.({ block: 'center' });
    el?.focus();
  };

  return (
    <div className="space-y-3">
      {hideEvidenceNav ? null : findings.length > 0 ? (
        <nav aria-label="Evidence" className="rounded-xl border border-zinc-200 bg-white p-3">
          <h4 className="text-sm font-medium text-zinc-900">Evidence ({findings.length})</h4>
          <ul className="mt-2 flex flex-wrap gap-2">
            {findings.map((f, i) => (
              <li key={i}>
                <button
                  type="button"
                  onClick={() => jump(f.messageIndex)}
                  className={cn('inline-flex items-center gap-1 rounded-lg border px-2 py-1 text-sm', levelStyle[f.level].tag, focusRing)}
                >
                  <span aria-hidden="true">{levelStyle[f.level].icon}</span>
                  Jump to message {f.messageIndex}: {levelStyle[f.level].name.toLowerCase()}, {f.label}
                </button>
              </li>
            ))}
          </ul>
        </nav>
      ) : (
        <p className="text-sm text-zinc-600">No scorer pointed at a message of this conversation.</p>
      )}
      <ol ref={list} className="space-y-2" aria-label="Messages">
        {messages.map((m, index) => {
          const found = byMessage.get(index) ?? [];
          const level: EvidenceLevel | null = !found.length
            ? null
            : found.some((f) => f.level === 'bad')
              ? 'bad'
              : found.some((f) => f.level === 'warn')
                ? 'warn'
                : 'ok';
          const content = text(m.content);
          const calls = toolCalls(m);
          const answers = typeof m.tool_call_id === 'string' ? m.tool_call_id : null;
          const toolName = m.role === 'tool' ? text(m.name) || (answers ? callNames.get(answers) : '') || '' : '';
          return (
            <li
              key={index}
              id={messageAnchor(idPrefix, index)}
              tabIndex={-1}
              data-evidence={level ?? undefined}
              aria-label={`Message ${index}, ${m.role}${level ? `, ${levelStyle[level].name.toLowerCase()}` : ''}`}
              className={cn('rounded-xl border p-3', level ? levelStyle[level].box : 'border-zinc-200 bg-white', focusRing)}
            >
              <div className="flex flex-wrap items-center gap-2">
                <Badge tone={roleTone[m.role] ?? 'neutral'} data-testid="role-badge">
                  {m.role}
                </Badge>
                <span className="text-sm text-zinc-600">#{index}</span>
                {toolName && <span className="font-mono text-sm text-zinc-800">{toolName}</span>}
                {answers && <span className="text-sm text-zinc-600">result of call {answers}</span>}
              </div>
              {content && (
                <p className="mt-2 whitespace-pre-wrap break-words text-sm text-zinc-900">
                  <Marked content={content} findings={found} />
                </p>
              )}
              {calls.length > 0 && (
                <ul className="mt-2 space-y-1" aria-label="Tool calls">
                  {calls.map((c, i) => (
                    <li key={i} className="rounded-lg border border-zinc-200 bg-zinc-50 p-2 text-sm">
                      <span className="font-medium text-zinc-900">Calls </span>
                      <span className="font-mono text-zinc-900">{c.name}</span>
                      {c.id && <span className="text-zinc-600"> (call {c.id})</span>}
                      {c.args && <pre className="mt-1 whitespace-pre-wrap break-words font-mono text-xs text-zinc-800">{c.args}</pre>}
                    </li>
                  ))}
                </ul>
              )}
              {found.map((f, i) => (
                <div key={i} className={cn('mt-2 rounded-lg border px-2 py-1 text-sm', levelStyle[f.level].tag)}>
                  <span aria-hidden="true">{levelStyle[f.level].icon} </span>
                  <span className="font-semibold">
                    {levelStyle[f.level].name}
                    {f.severity ? ` (${f.severity})` : ''}: {f.label}
                  </span>{' '}
                  <span>
                    — {f.scorer}: {f.message}
                  </span>
                </div>
              ))}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
