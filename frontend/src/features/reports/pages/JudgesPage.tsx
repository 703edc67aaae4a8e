import { useId } from 'react';
import { Card, CardContent, EmptyState } from '@/components/ui';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import type { JudgeCalibration } from '../api';
import { DataTable } from '../components/Figure';
import { Loading, LoadError, ReportsShell } from '../components/ReportsShell';
import { int, num, pct } from '../format';
import { useCalibration } from '../hooks';

type Item = JudgeCalibration['items'][number];

/** An agreement coefficient, or why there is none. */
const coefficient = (v: number | null | undefined) => (v === null || v === undefined ? 'undefined (no variation or no shared output)' : num(v, 3));

function JudgeVersion({ item }: { item: Item }) {
  const id = useId();
  const agreement = item.agreement;
  return (
    <section aria-labelledby={id}>
      <Card>
        <CardContent className="space-y-3">
          <h2 id={id} className="text-base font-semibold text-zinc-900">
            {item.name} v{item.version} <span className="font-normal text-zinc-600">({item.kind})</span>
          </h2>
          <p className="text-sm text-zinc-700">
            {int(item.outputs)} outputs scored across {int(item.runs)} {item.runs === 1 ? 'run' : 'runs'} by {item.judges.join(', ') || 'no judge'}.
          </p>
          {agreement ? (
            <p className="text-sm text-zinc-800">
              Between its judges: Krippendorff’s α = {coefficient(agreement.alpha.alpha)} over {int(agreement.alpha.n_units)} outputs rated at least twice
              {agreement.kappa && `; Cohen’s κ on their verdicts = ${coefficient(agreement.kappa.kappa)} over ${int(agreement.kappa.n)} outputs`}.
            </p>
          ) : (
            <p className="text-sm text-zinc-600">One judge: no agreement between judges to measure.</p>
          )}
          {item.judge_human.length === 0 ? (
            <p className="text-sm text-zinc-600">No person has scored these outputs with a manual scorer, so there is nothing to calibrate against yet.</p>
          ) : (
            <DataTable
              caption={`${item.name} v${item.version} against people`}
              rowKey={(h) => `${h.judge ?? 'mean'}-${h.human_scorer_version_id}`}
              rows={item.judge_human}
              columns={[
                { key: 'judge', header: 'Judge', cell: (h) => h.judge ?? 'Mean of the judges' },
                { key: 'human', header: 'People (manual scorer)', cell: (h) => `${h.human_name} v${h.human_version} · ${h.reviewers} ${h.reviewers === 1 ? 'reviewer' : 'reviewers'}` },
                { key: 'n', header: 'Outputs both scored', cell: (h) => int(h.n), numeric: true },
                { key: 'exact', header: 'Exact agreement', cell: (h) => pct(h.exact_agreement), numeric: true },
                { key: 'mad', header: 'Mean |difference|', cell: (h) => num(h.mean_abs_difference, 3), numeric: true },
                { key: 'alpha', header: 'α', cell: (h) => num(h.alpha.alpha, 3), numeric: true },
                { key: 'kappa', header: 'κ (weighted)', cell: (h) => num(h.kappa.kappa, 3), numeric: true },
              ]}
            />
          )}
        </CardContent>
      </Card>
    </section>
  );
}

export function JudgesPage() {
  const { project } = useProjectOutlet();
  const calibration = useCalibration(project.id);
  let body;
  if (calibration.isPending) body = <Loading label="Loading judge calibration" />;
  else if (calibration.isError) body = <LoadError what="judge calibration" error={calibration.error} retry={() => calibration.refetch()} retrying={calibration.isFetching} />;
  else if (calibration.data.items.length === 0)
    body = (
      <EmptyState
        title="No judge scores yet"
        description="Calibration compares an LLM judge with other judges and with people. Add a judge scorer to a run; score some of its outputs by hand with a manual scorer to see how far the judge agrees with people."
      />
    );
  else
    body = (
      <div className="space-y-4">
        {calibration.data.items.map((item) => (
          <JudgeVersion key={item.scorer_version_id} item={item} />
        ))}
      </div>
    );
  return (
    <ReportsShell
      projectId={project.id}
      title="Judge calibration"
      intro="For each version of each judge, over every run it scored: how its judge models agree with each other and with people. α and κ are 1 for perfect agreement and 0 for chance."
    >
      {body}
    </ReportsShell>
  );
}
