import { useState } from 'react';
import { Link } from 'react-router-dom';
import { EmptyState, ErrorState, LoadingRows, Pager, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { absoluteTime } from '@/lib/format';
import { cn, focusRing } from '@/lib/cn';
import { judgmentsPath } from '../api';
import { JUDGINGS_PAGE_SIZE, useDatasetJudgings } from '../hooks/useJudgments';

/** A dataset's judge-mode runs, newest first, each linking to its results. */
export function JudgingsList({ projectId, datasetId }: { projectId: number; datasetId: number }) {
  const [page, setPage] = useState(1);
  const judgings = useDatasetJudgings(projectId, datasetId, page);

  if (judgings.isPending) return <LoadingRows label="Loading the judgments" rows={2} />;
  if (judgings.isError) return <ErrorState title="Could not load the judgments" error={judgings.error} onRetry={() => judgings.refetch()} retrying={judgings.isFetching} />;
  const { items, total } = judgings.data;
  if (total === 0) {
    return (
      <EmptyState
        title="No judgments yet"
        description="With “Judge questions”, judge models rate every question of this dataset on clarity, difficulty, relevance and originality."
      />
    );
  }
  return (
    <div className="space-y-2">
      <Table aria-label="Judgments of this dataset">
        <THead>
          <TR>
            <TH>Judging</TH>
            <TH>Questions</TH>
            <TH>Started</TH>
          </TR>
        </THead>
        <TBody>
          {items.map((run) => (
            <TR key={run.id}>
              <TD>
                <Link to={judgmentsPath(projectId, datasetId, run.id)} className={cn('rounded-xl text-indigo-700 hover:underline', focusRing)}>
                  {run.name}
                </Link>
              </TD>
              <TD className="tabular-nums">{run.total}</TD>
              <TD>{absoluteTime(run.created_at)}</TD>
            </TR>
          ))}
        </TBody>
      </Table>
      {total > JUDGINGS_PAGE_SIZE && (
        <Pager label="Judgments pagination" page={page} pageCount={Math.ceil(total / JUDGINGS_PAGE_SIZE)} onPage={setPage} />
      )}
    </div>
  );
}
