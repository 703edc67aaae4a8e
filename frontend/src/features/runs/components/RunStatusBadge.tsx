import { Badge, type BadgeTone } from '@/components/ui';
import type { RunStatus } from '@/api/types';

const tones: Record<RunStatus, BadgeTone> = {
  pending: 'neutral',
  running: 'indigo',
  paused: 'warning',
  completed: 'success',
  partial: 'warning',
  failed: 'danger',
  cancelled: 'neutral',
  budget_exceeded: 'danger',
};

export const RUN_STATUSES: readonly RunStatus[] = [
  'pending',
  'running',
  'paused',
  'completed',
  'partial',
  'failed',
  'cancelled',
  'budget_exceeded',
];

export const runStatusLabel: Record<RunStatus, string> = {
  pending: 'Pending',
  running: 'Running',
  paused: 'Paused',
  completed: 'Completed',
  partial: 'Partial',
  failed: 'Failed',
  cancelled: 'Cancelled',
  budget_exceeded: 'Budget exceeded',
};

export function RunStatusBadge({ status, ...rest }: { status: RunStatus; 'data-testid'?: string }) {
  return (
    <Badge tone={tones[status] ?? 'neutral'} {...rest}>
      {runStatusLabel[status] ?? status}
    </Badge>
  );
}
