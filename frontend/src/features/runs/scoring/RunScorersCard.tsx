import { Card, CardContent, CardHeader, CardTitle } from '@/components/ui';
import type { ScorerPick } from './api';
import { ScorerPicker } from './ScorerPicker';

/** The New run form's scorers: each reply is scored as it lands; LLM judges add to the estimate. */
export function RunScorersCard({
  projectId,
  value,
  onChange,
  error,
}: {
  projectId: number;
  value: ScorerPick[];
  onChange: (next: ScorerPick[]) => void;
  error?: string | null;
}) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Scorers</CardTitle>
      </CardHeader>
      <CardContent className="space-y-3">
        <p className="text-sm text-zinc-600">
          Each reply is scored by every scorer picked here as it lands. LLM judges are paid calls: their cost is in the estimate.
        </p>
        {error && (
          <p className="text-sm text-red-700" role="alert" id="run-scorers-error">
            {error}
          </p>
        )}
        <ScorerPicker projectId={projectId} value={value} onChange={onChange} idPrefix="run-scorer" />
      </CardContent>
    </Card>
  );
}
