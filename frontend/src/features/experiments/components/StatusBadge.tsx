import { Badge, type BadgeTone } from '@/components/ui';

const TONES: Record<string, BadgeTone> = {
  draft: 'neutral',
  running: 'indigo',
  paused: 'warning',
  completed: 'success',
  failed: 'danger',
  cancelled: 'neutral',
  executing: 'indigo',
  judging: 'indigo',
  aggregating: 'indigo',
  refining: 'indigo',
  awaiting_review: 'warning',
  approved: 'success',
  rejected: 'neutral',
};

export const statusLabel = (s: string) => s.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

export function StatusBadge({ status, paused }: { status: string; paused?: boolean }) {
  return (
    <Badge tone={paused ? 'warning' : (TONES[status] ?? 'neutral')} data-testid="status">
      {statusLabel(status)}
      {paused ? ' (paused)' : ''}
    </Badge>
  );
}
