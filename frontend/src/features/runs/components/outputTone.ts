import type { BadgeTone } from '@/components/ui';
import type { CellStatus } from '../api';

export const outputTone: Record<CellStatus, BadgeTone> = {
  pending: 'neutral',
  running: 'indigo',
  succeeded: 'success',
  failed: 'danger',
  skipped: 'warning',
};
