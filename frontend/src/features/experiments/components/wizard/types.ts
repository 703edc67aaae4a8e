import type { DraftForm } from '../../lib/draft';
import type { FieldErrors } from '../../lib/validation';

export interface StepProps {
  projectId: number;
  experimentId: number | null;
  draft: DraftForm;
  update: (patch: Partial<DraftForm>) => void;
  errors: FieldErrors;
}
