import { Alert, Button, Dialog, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { formatMicros } from '@/lib/money';
import type { RunEstimate } from '../api';
import { RunProblems } from './RunProblems';

/** "$0.01 – $0.03", or one amount when the range is a point. */
export function formatRange(low: number, high: number): string {
  return low === high ? formatMicros(low) : `${formatMicros(low)} – ${formatMicros(high)}`;
}

/** The confirm step: the estimate per target, unpriced models and every problem; start is disabled while there are problems. */
export function ConfirmRunDialog({
  open,
  estimate,
  modelName,
  budgetMicros,
  starting,
  startError,
  onStart,
  onClose,
}: {
  open: boolean;
  estimate: RunEstimate | null;
  modelName: (id: number) => string;
  budgetMicros: number | null;
  starting: boolean;
  startError: unknown;
  onStart: () => void;
  onClose: () => void;
}) {
  if (!estimate) return null;
  const e = estimate;
  const problems = e.problems ?? [];
  const priced = e.per_target.filter((t) => t.priced);
  const allUnpriced = priced.length === 0 && e.per_target.length > 0;
  const overBudget = budgetMicros !== null && e.high_micros > budgetMicros;
  return (
    <Dialog
      open={open}
      onClose={onClose}
      size="wide"
      title="Start this run?"
      description={`${e.calls.toLocaleString('en-US')} calls: ${e.cases.toLocaleString('en-US')} cases × ${e.per_target.length} ${e.per_target.length === 1 ? 'target' : 'targets'}${e.repeats > 1 ? ` × ${e.repeats} repeats` : ''}.`}
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Back to the form
          </Button>
          <Button onClick={onStart} loading={starting} disabled={problems.length > 0}>
            Start run
          </Button>
        </>
      }
    >
      <div className="space-y-4" data-testid="run-estimate">
        <div className="flex flex-wrap items-baseline justify-between gap-2 rounded-xl border border-zinc-200 bg-zinc-50 p-3">
          <span className="text-sm font-medium text-zinc-900">Estimated cost</span>
          <span className="text-base font-semibold tabular-nums text-zinc-900" data-testid="estimate-total">
            {allUnpriced ? 'Unknown' : formatRange(e.low_micros, e.high_micros)}
            {!allUnpriced && !e.complete && <span className="text-sm font-normal text-amber-800"> + unpriced</span>}
          </span>
        </div>
        <Table aria-label="Cost per target">
          <THead>
            <TR>
              <TH>Target</TH>
              <TH className="text-right">Calls</TH>
              <TH className="text-right">Cost</TH>
            </TR>
          </THead>
          <TBody>
            {e.per_target.map((t, i) => (
              <TR key={`${t.label}-${i}`}>
                <TD>{t.label}</TD>
                <TD className="text-right tabular-nums">{t.calls.toLocaleString('en-US')}</TD>
                <TD className="text-right tabular-nums">
                  {t.priced && t.low_micros !== null && t.high_micros !== null ? (
                    formatRange(t.low_micros, t.high_micros)
                  ) : (
                    <span className="text-amber-800">unpriced</span>
                  )}
                </TD>
              </TR>
            ))}
            {e.judge_calls > 0 && (
              <TR data-testid="estimate-judges">
                <TD>LLM judges</TD>
                <TD className="text-right tabular-nums">{e.judge_calls.toLocaleString('en-US')}</TD>
                <TD className="text-right tabular-nums">{formatRange(e.judge_low_micros, e.judge_high_micros)}</TD>
              </TR>
            )}
          </TBody>
        </Table>
        {e.unpriced_models.length > 0 && (
          <p className="text-sm text-amber-800">
            Unpriced, so not in the total: {e.unpriced_models.map(modelName).join(', ')}. Their cost is unknown, not zero.
          </p>
        )}
        <p className="text-sm text-zinc-600">
          The range spans short to maximum-length replies; cached replies cost nothing.
          {budgetMicros !== null && <> Budget: {formatMicros(budgetMicros)}.</>}
        </p>
        {overBudget && problems.length === 0 && (
          <Alert tone="info">
            The high end is over the budget: the run stops as budget exceeded if replies are long.
          </Alert>
        )}
        <RunProblems problems={problems} title="Fix these before starting:" />
        {startError != null && <Alert>{errorMessage(startError)}</Alert>}
      </div>
    </Dialog>
  );
}
