import type { ReactNode } from 'react';
import { Alert, Button } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { missesOf } from '../logic';
import type { Attempt, Miss, Tab } from '../types';
import { DiffSummary } from './DiffSummary';
import { MissList } from './MissList';
import { RunSummary } from './RunSummary';
import { Critique, TestReport } from './TestReport';
import { TAB_LABEL } from './EditorTabs';

interface ResultsPaneProps {
  tab: Tab;
  threshold: number;
  contract: string[];
  dev: Attempt | null;
  test: Attempt | null;
  running: 'dev' | 'test' | null;
  runError: unknown;
  blockedReason: string | null;
  /** Why Ship to Prod cannot run when Run could (the judge tab without an approved judge). */
  shipBlockedReason?: string | null;
  onRun: () => void;
  onShip: () => void;
  onJump: (m: Miss) => void;
  onTrace: (traceId: string) => void;
  /** Judge mode: whose budget pays (a project picker). */
  payer?: ReactNode;
}

function Section({ title, children, testId }: { title: string; children: ReactNode; testId: string }) {
  return (
    <section aria-label={title} className="space-y-3 rounded-xl border border-zinc-200 p-3" data-testid={testId}>
      <h3 className="text-sm font-semibold text-zinc-900">{title}</h3>
      {children}
    </section>
  );
}

/** Pane 3: run on dev, ship to the hidden set, and read what happened. */
export function ResultsPane({ tab, threshold, contract, dev, test, running, runError, blockedReason, shipBlockedReason = null, onRun, onShip, onJump, onTrace, payer }: ResultsPaneProps) {
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-2">
        <Button onClick={onRun} loading={running === 'dev'} disabled={running !== null || !!blockedReason} aria-keyshortcuts="Control+Enter Meta+Enter">
          ▶ Run (Dev set)
        </Button>
        <Button variant="secondary" onClick={onShip} loading={running === 'test'} disabled={running !== null || !!blockedReason || !!shipBlockedReason}>
          Ship to Prod (Hidden)
        </Button>
      </div>
      <p className="text-sm text-zinc-600">
        Mode: <span className="font-medium text-zinc-900">{TAB_LABEL[tab]}</span>. Only this tab runs.
      </p>
      {blockedReason && <p className="text-sm text-red-700">{blockedReason}</p>}
      {!blockedReason && shipBlockedReason && <p className="text-sm text-red-700">{shipBlockedReason}</p>}
      {payer}
      {runError != null && <Alert tone="danger">{errorMessage(runError)}</Alert>}
      <Section title="Dev set" testId="dev-results">
        {dev ? (
          <>
            <RunSummary summary={dev.summary} threshold={threshold} gate="Dev" />
            <DiffSummary diff={dev.diff} onTrace={onTrace} />
            <Critique critique={dev.critique} />
            <MissList misses={missesOf(dev, contract)} onJump={onJump} />
          </>
        ) : (
          <p className="text-sm text-zinc-600">No run yet. Run the dev set to see pass rate, misses and evidence.</p>
        )}
      </Section>
      <Section title="Hidden test set (Prod)" testId="test-results">
        {test ? (
          <>
            <RunSummary summary={test.summary} threshold={threshold} gate="Prod" />
            {test.summary.ready && <p className="text-sm font-medium text-emerald-800">Challenge completed: your eval generalises to the hidden set.</p>}
            <DiffSummary diff={test.diff} />
            <Critique critique={test.critique} />
            <TestReport report={test.report} />
          </>
        ) : (
          <p className="text-sm text-zinc-600">Not shipped yet. The hidden set shows whether your eval generalises beyond the dev traces.</p>
        )}
      </Section>
    </div>
  );
}
