import { Badge } from '@/components/ui';
import { blockedBecause, passReading, pct } from '../logic';
import type { Summary } from '../types';

/** Pass rate, critical count and the release gate, with what "pass" means. */
export function RunSummary({ summary, threshold, gate }: { summary: Summary; threshold: number; gate: 'Dev' | 'Prod' }) {
  const why = blockedBecause(summary, threshold);
  return (
    <div className="space-y-2" data-testid={`summary-${gate.toLowerCase()}`}>
      <div className="flex flex-wrap gap-2">
        <Badge tone={summary.ready ? 'success' : 'danger'} data-testid="gate">
          {summary.ready ? `✓ ${gate} ready` : `✗ Blocked`}
        </Badge>
        <Badge tone="neutral">Pass rate {pct(summary.pass_rate)}</Badge>
        <Badge tone={summary.critical_count > 0 ? 'danger' : 'neutral'}>Critical {summary.critical_count}</Badge>
      </div>
      <p className="text-sm text-zinc-600">{passReading(summary, threshold)}</p>
      {why.length > 0 && <p className="text-sm text-red-800">Blocked: {why.join('; ')}.</p>}
    </div>
  );
}
