import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { buttonClasses, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, LoadingRows, Pager, Progress } from '@/components/ui';
import { isApiError } from '@/api/errors';
import { useDataset } from '@/features/datasets/hooks/useDatasets';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { cn, focusRing } from '@/lib/cn';
import { criterionLabel, type Judgments } from '../api';
import { AgreementTable, JudgeMeansTable } from '../components/AgreementPanel';
import { JudgmentsTable } from '../components/JudgmentsTable';
import { JUDGMENTS_PAGE_SIZE, useJudgments } from '../hooks/useJudgments';

function ProgressLine({ data }: { data: Judgments }) {
  const { expected, scored, failed, done } = data.progress;
  const landed = scored + failed;
  const failures = failed > 0 ? ` (${failed} failed)` : '';
  return (
    <div className="space-y-2">
      <p role="status" className="text-sm text-zinc-700" data-testid="judging-progress">
        {done ? `All ${expected} ratings are in${failures}.` : `Judging: ${landed} of ${expected} ratings${failures}…`}
      </p>
      {!done && <Progress label="Judging progress" value={expected ? (landed / expected) * 100 : 0} />}
    </div>
  );
}

/** A judge-mode run's results: each judge's ratings of each question side by side, the means and the agreement. */
export function JudgmentsPage() {
  const { project } = useProjectOutlet();
  const params = useParams();
  const datasetId = Number(params.datasetId);
  const runId = Number(params.runId);
  const [page, setPage] = useState(1);
  const dataset = useDataset(project.id, datasetId);
  const judgments = useJudgments(project.id, runId, page);
  const datasetUrl = `/projects/${project.id}/datasets/${datasetId}`;

  if (judgments.isError && isApiError(judgments.error) && judgments.error.status === 404) {
    return (
      <EmptyState
        title="No judgments here"
        description="This run does not exist in this project, or it is not a judge-mode run."
        action={
          <Link to={datasetUrl} className={buttonClasses('secondary')}>
            Back to the dataset
          </Link>
        }
      />
    );
  }
  if (judgments.isPending) return <LoadingRows label="Loading the judgments" rows={4} />;
  if (judgments.isError) {
    return <ErrorState title="Could not load the judgments" error={judgments.error} onRetry={() => judgments.refetch()} retrying={judgments.isFetching} />;
  }

  const data = judgments.data;
  const pageCount = Math.max(1, Math.ceil(data.total / JUDGMENTS_PAGE_SIZE));
  return (
    <div className="space-y-4">
      <Card aria-labelledby="judgments-heading">
        <CardHeader className="flex-col">
          <nav aria-label="Dataset breadcrumb" className="text-sm text-zinc-500">
            <Link to={`/projects/${project.id}/datasets`} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
              Datasets
            </Link>{' '}
            /{' '}
            <Link to={datasetUrl} className={cn('rounded-xl hover:text-zinc-900', focusRing)}>
              {dataset.data?.name ?? `Dataset ${datasetId}`}
            </Link>{' '}
            / <span className="text-zinc-900">Judgments</span>
          </nav>
          <CardTitle id="judgments-heading" className="text-xl">
            Question judgments
          </CardTitle>
          <p className="text-sm text-zinc-600" data-testid="judging-setup">
            {data.judges.length} judge{data.judges.length === 1 ? '' : 's'} · {data.criteria.map(criterionLabel).join(', ')} · 1–10
          </p>
          {data.instruction && (
            <p className="text-sm text-zinc-700">
              <span className="font-medium">Instruction:</span> {data.instruction}
            </p>
          )}
        </CardHeader>
        <CardContent>
          <ProgressLine data={data} />
        </CardContent>
      </Card>

      {data.progress.questions === 0 ? (
        <EmptyState title="No questions were judged" description="The dataset version had no questions." />
      ) : (
        <>
          <section aria-labelledby="means-heading" className="space-y-2">
            <h2 id="means-heading" className="text-base font-semibold">
              Mean rating per judge
            </h2>
            <JudgeMeansTable judges={data.judges} criteria={data.criteria} />
            <p className="text-sm text-zinc-500">In brackets: the 95% interval of the mean over the questions.</p>
          </section>
          <section aria-labelledby="agreement-heading" className="space-y-2">
            <h2 id="agreement-heading" className="text-base font-semibold">
              Agreement between judges
            </h2>
            <AgreementTable agreement={data.agreement} overall={data.overall_agreement} judges={data.judges.length} />
            <p className="text-sm text-zinc-500">
              Krippendorff’s alpha over every question: 1 is perfect agreement, 0 no more than chance. 0.8 or more supports conclusions; 0.667 to 0.8 tentative ones.
            </p>
          </section>
          <section aria-labelledby="questions-heading" className="space-y-2">
            <h2 id="questions-heading" className="text-base font-semibold">
              Ratings per question
            </h2>
            <JudgmentsTable items={data.items} judges={data.judges} criteria={data.criteria} />
            {pageCount > 1 && (
              <Pager
                label="Judgments pagination"
                page={page}
                pageCount={pageCount}
                onPage={setPage}
                summary={`Questions ${(page - 1) * JUDGMENTS_PAGE_SIZE + 1}–${Math.min(page * JUDGMENTS_PAGE_SIZE, data.total)} of ${data.total}`}
              />
            )}
          </section>
        </>
      )}
    </div>
  );
}
