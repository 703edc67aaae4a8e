import { lazy, Suspense, useState } from 'react';
import { Button, Spinner } from '@/components/ui';
import type { RuleProblem } from '@/features/scorers/components/RulesEditor';
import { cn, focusRing } from '@/lib/cn';
import { useRevealHint } from '../hooks/useArena';
import type { Tab } from '../types';
import { EditorTabs, TAB_LABEL } from './EditorTabs';

// CodeMirror is its own chunk: the workspace paints before the editor has loaded.
const CodeEditor = lazy(() => import('@/features/scorers/components/RulesCodeEditor'));

export type SaveState = 'idle' | 'saving' | 'saved' | 'error' | 'conflict';

interface EditorPaneProps {
  challengeId: string;
  tab: Tab;
  onTab: (t: Tab) => void;
  text: string;
  onText: (text: string) => void;
  problems: RuleProblem[];
  checking: boolean;
  saveState: SaveState;
  onRun: () => void;
  hasHint: boolean;
  /** The tab's hint once revealed (the server remembers that it was). */
  hint: string | null;
}

const SAVE_LABEL: Record<SaveState, string> = { idle: '', saving: 'Saving…', saved: 'Saved', error: 'Not saved: retrying on the next edit', conflict: 'Not saved: changed elsewhere' };

/** Pane 2: the active eval mode's editor, its problems before any run, and the hint. */
export function EditorPane({ challengeId, tab, onTab, text, onText, problems, checking, saveState, onRun, hasHint, hint }: EditorPaneProps) {
  const [focus, setFocus] = useState<RuleProblem | null>(null);
  const [undo, setUndo] = useState<{ tab: Tab; text: string } | null>(null);
  const reveal = useRevealHint(challengeId);
  const hasProblems = problems.length > 0;

  const insertSkeleton = () => {
    if (hint == null) return;
    setUndo({ tab, text });
    onText(hint);
  };

  return (
    <div className="space-y-3">
      <EditorTabs tab={tab} onTab={onTab} />
      <div id="arena-editor-panel" role="tabpanel" aria-labelledby={`arena-tab-${tab}`} className="space-y-3">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <span id="arena-editor-label" className="text-sm font-medium text-zinc-900">
            {TAB_LABEL[tab]}
          </span>
          <span className="text-sm text-zinc-500" role="status" data-testid="save-state">
            {checking ? 'Checking…' : SAVE_LABEL[saveState]}
          </span>
        </div>
        <p id="arena-editor-help" className="text-sm text-zinc-600">
          {tab === 'rules'
            ? 'rules: a list of {id, when: agent_says/user_requests("…"), require: tool_called("…") or action: fail, severity}. Patterns are case-insensitive substrings; "re:" makes a regex.'
            : 'A rubric the judge applies to each trace: say what fails, with which contract clause and severity. The judge answers JSON (pass, severity, cluster, reason, evidence).'}{' '}
          Ctrl/Cmd+Enter runs the dev set.
        </p>
        <Suspense
          fallback={
            <div role="status" className="flex h-56 items-center justify-center gap-2 rounded-xl border border-zinc-200 text-sm text-zinc-600">
              <Spinner /> Loading editor…
            </div>
          }
        >
          <CodeEditor
            key={tab}
            id={`arena-editor-${tab}`}
            value={text}
            onChange={onText}
            problems={problems}
            focus={focus}
            labelledBy="arena-editor-label"
            describedBy={hasProblems ? 'arena-problems' : 'arena-editor-help'}
            language={tab === 'rules' ? 'yaml' : 'text'}
            onSubmit={onRun}
            minHeight="16rem"
          />
        </Suspense>
        {hasProblems && (
          <ul id="arena-problems" aria-label="Problems" role="alert" className="space-y-1" data-testid="editor-problems">
            {problems.map((p, i) => (
              <li key={i}>
                <button
                  type="button"
                  className={cn(
                    'rounded-xl text-left text-sm underline-offset-2 hover:underline',
                    p.level === 'warning' ? 'text-amber-800' : 'text-red-700',
                    focusRing,
                  )}
                  onClick={() => setFocus({ ...p })}
                >
                  {p.level === 'warning' ? 'Warning, line' : 'Line'} {p.line}, column {p.column}: {p.message}
                </button>
              </li>
            ))}
          </ul>
        )}
        {hasHint && (
          <details
            key={tab}
            className="rounded-xl border border-zinc-200 p-3"
            onToggle={(e) => {
              if ((e.currentTarget as HTMLDetailsElement).open && hint == null && !reveal.isPending) reveal.mutate(tab);
            }}
          >
            <summary className={cn('cursor-pointer rounded-xl px-1 text-sm font-medium text-zinc-900', focusRing)}>Reveal hint</summary>
            <div className="mt-2 space-y-2">
              {hint == null ? (
                reveal.isError ? (
                  <p className="text-sm text-red-700">Could not load the hint. Close and open it again.</p>
                ) : (
                  <p className="text-sm text-zinc-600">Loading the hint…</p>
                )
              ) : (
                <>
                  <pre className="whitespace-pre-wrap break-words rounded-xl bg-zinc-50 p-3 font-mono text-sm text-zinc-800" data-testid="hint-text">
                    {hint}
                  </pre>
                  <div className="flex flex-wrap items-center gap-2">
                    <Button size="sm" variant="secondary" onClick={insertSkeleton}>
                      Insert skeleton
                    </Button>
                    {undo?.tab === tab && (
                      <Button size="sm" variant="ghost" onClick={() => (onText(undo.text), setUndo(null))}>
                        Undo insert
                      </Button>
                    )}
                    <span className="text-sm text-zinc-500">Replaces the editor's text with a partial skeleton (TODOs, not a solution).</span>
                  </div>
                </>
              )}
            </div>
          </details>
        )}
      </div>
    </div>
  );
}
