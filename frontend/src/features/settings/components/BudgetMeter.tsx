import { Progress } from '@/components/ui';
import { formatMicros } from '@/lib/money';
import type { ProjectSettings } from '../settingsForm';

/** Spend so far against the project's cap, as stored (spent and held by calls in flight). */
export function BudgetMeter({ settings }: { settings: ProjectSettings }) {
  const { budget_micros: cap, spent_micros: spent, reserved_micros: reserved } = settings;
  const share = cap ? (spent / cap) * 100 : 0;
  const over = cap !== null && spent >= cap;
  return (
    <div className="space-y-2" aria-label="Project spend">
      <p className="text-sm">
        <span className="font-medium">
          {`Spent so far: ${formatMicros(spent)}`}
          {cap !== null ? ` of ${formatMicros(cap)}` : ' (no cap)'}
        </span>
        {reserved > 0 && <span className="text-zinc-500"> · {formatMicros(reserved)} held by calls in flight</span>}
      </p>
      {cap !== null && (
        <Progress
          value={cap === 0 ? 100 : share}
          label="Share of the project budget spent"
          tone={over ? 'danger' : share >= settings.alert_threshold * 100 ? 'danger' : 'indigo'}
        />
      )}
      {over && <p className="text-sm text-red-700">The budget is used up: runs of this project stop as budget exceeded.</p>}
    </div>
  );
}
