import { useCallback, useEffect, useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { ErrorState, LoadingRows } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { ContextPane } from '../components/ContextPane';
import { EditorPane } from '../components/EditorPane';
import { PayerPicker, ShipJudgePicker, type Payer } from '../components/PayerPicker';
import { ResultsPane } from '../components/ResultsPane';
import { useChallenge, useLatestAttempt, useRunAttempt } from '../hooks/useArena';
import { useEvalText } from '../hooks/useEvalText';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import { jumpIndex, scrollToMessage } from '../logic';
import type { Miss, Tab, TargetSet } from '../types';

type Pane = 'context' | 'editor' | 'results';
const PANES: Array<[Pane, string]> = [
  ['context', 'Trace'],
  ['editor', 'Eval'],
  ['results', 'Results'],
];

/** EvalArena's workspace (spec §6 Page 2): context and trace, the eval editor, results.
 * Keyed by the challenge: another challenge starts from its own texts and state. */
export function ArenaWorkspacePage() {
  const { challengeId = '' } = useParams();
  return <Workspace key={challengeId} challengeId={challengeId} />;
}

function Workspace({ challengeId }: { challengeId: string }) {
  const challenge = useChallenge(challengeId);
  const [tab, setTab] = useState<Tab>('rules');
  const [traceId, setTraceId] = useState('');
  const [pane, setPane] = useState<Pane>('editor');
  const [payer, setPayer] = useState<Payer>({ projectId: null, judge: null });
  const [shipJudge, setShipJudge] = useState<string | null>(null);
  const evalText = useEvalText(challenge.data, tab);
  const dev = useLatestAttempt(challengeId, tab, 'dev');
  const test = useLatestAttempt(challengeId, tab, 'test');
  const run = useRunAttempt(challengeId);
  const [running, setRunning] = useState<TargetSet | null>(null);

  const blockedReason = evalText.errors.length
    ? 'Fix the problems in the editor first.'
    : !evalText.text.trim()
      ? 'Write an eval first.'
      : tab === 'judge' && (payer.projectId === null || payer.judge === null)
        ? 'Pick the project that pays for judge calls and its judge model.'
        : null;
  const shipBlockedReason =
    tab === 'judge' && !challenge.data?.ship_judges.length
      ? 'No judge is approved for hidden sets on this instance (its operator sets ASSAY_ARENA_SHIP_JUDGES).'
      : null;

  const start = useCallback(
    (set: TargetSet) => {
      if (blockedReason || running || (set === 'test' && shipBlockedReason)) return;
      setRunning(set);
      const judge = set === 'test' ? shipJudge : payer.judge;
      run.mutate(
        { tab, set, text: evalText.text, ...(tab === 'judge' ? { project_id: payer.projectId, judge } : {}) },
        { onSettled: () => setRunning(null), onSuccess: () => setPane('results') },
      );
    },
    [blockedReason, shipBlockedReason, running, run, tab, evalText.text, payer, shipJudge],
  );

  // Ctrl/Cmd+Enter runs the dev set, +Shift ships; the editor handles its own Ctrl+Enter.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.key !== 'Enter' || !(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      start(e.shiftKey ? 'test' : 'dev');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [start]);

  const jump = (m: Miss) => {
    setTraceId(m.trace_id);
    setPane('context');
    const index = jumpIndex(m, challenge.data?.dev_traces.find((t) => t.id === m.trace_id));
    if (index != null) scrollToMessage(m.trace_id, index);
  };

  if (challenge.isPending) return <LoadingRows label="Loading the challenge" rows={6} />;
  if (challenge.isError)
    return <ErrorState title="Could not load this challenge" error={challenge.error} onRetry={() => void challenge.refetch()} retrying={challenge.isFetching} />;
  const c = challenge.data;
  const devAttempt = dev.data ?? null;
  const testAttempt = test.data ?? null;
  const paneClass = (p: Pane) =>
    cn('min-w-0 rounded-xl border border-zinc-200 bg-white p-4 lg:block lg:overflow-y-auto', pane === p ? 'block' : 'hidden');

  // At lg the page is the viewport's height (less the top bar and main's padding) and each
  // pane scrolls on its own; below it the panes are tabs and the page scrolls.
  return (
    <div className="space-y-4 lg:flex lg:h-[calc(100vh-105px)] lg:flex-col lg:space-y-0 lg:gap-4">
      <div className="space-y-1">
        <Link to="/arena" className={cn('rounded-xl text-sm text-indigo-600 hover:text-indigo-700', focusRing)}>
          ← All challenges
        </Link>
        <h1 className="text-xl font-semibold text-zinc-900">{c.title}</h1>
        <p className="text-sm text-zinc-600">
          <span className="font-mono">{c.id}</span> · {c.category} · {c.difficulty} · {c.mode_label}
        </p>
        <p className="text-sm text-zinc-700 lg:line-clamp-2" title={c.description}>
          {c.description}
        </p>
      </div>
      <div role="tablist" aria-label="Workspace panes" className="flex gap-1 rounded-xl border border-zinc-200 bg-zinc-50 p-1 lg:hidden">
        {PANES.map(([p, label]) => (
          <button
            key={p}
            type="button"
            role="tab"
            aria-selected={pane === p}
            onClick={() => setPane(p)}
            className={cn('h-8 flex-1 rounded-xl text-sm font-medium', pane === p ? 'border border-zinc-200 bg-white text-indigo-700' : 'text-zinc-600', focusRing)}
          >
            {label}
          </button>
        ))}
      </div>
      <div className="grid gap-4 lg:min-h-0 lg:flex-1 lg:grid-cols-3">
        <section aria-label="Context and trace" className={paneClass('context')} data-testid="pane-context">
          <ContextPane challenge={c} traceId={traceId || c.dev_traces[0]?.id || ''} onTrace={setTraceId} attempt={devAttempt} />
        </section>
        <section aria-label="Eval editor" className={paneClass('editor')} data-testid="pane-editor">
          {evalText.stale && (
            <StaleWriteNotice
              className="mb-3"
              error={evalText.stale.error}
              edit={evalText.stale.text}
              onReload={evalText.reload}
              onKeepMine={evalText.keepMine}
              keeping={evalText.keeping}
            />
          )}
          {evalText.ready ? (
            <EditorPane
              challengeId={c.id}
              tab={tab}
              onTab={setTab}
              text={evalText.text}
              onText={evalText.setText}
              problems={evalText.problems}
              checking={evalText.checking}
              saveState={evalText.saveState}
              onRun={() => start('dev')}
              hasHint={c.tabs[tab].has_hint}
              hint={c.tabs[tab].hint}
            />
          ) : (
            <LoadingRows label="Loading the editor" rows={4} />
          )}
        </section>
        <section aria-label="Results" className={paneClass('results')} data-testid="pane-results">
          <ResultsPane
            tab={tab}
            threshold={c.pass_threshold}
            contract={c.context.contract}
            dev={devAttempt}
            test={testAttempt}
            running={running}
            runError={run.error}
            blockedReason={blockedReason}
            shipBlockedReason={shipBlockedReason}
            onRun={() => start('dev')}
            onShip={() => start('test')}
            onJump={jump}
            onTrace={(id) => (setTraceId(id), setPane('context'))}
            payer={
              tab === 'judge' ? (
                <>
                  <PayerPicker value={payer} onChange={setPayer} />
                  <ShipJudgePicker judges={c.ship_judges} value={shipJudge} onChange={setShipJudge} />
                </>
              ) : undefined
            }
          />
        </section>
      </div>
    </div>
  );
}
