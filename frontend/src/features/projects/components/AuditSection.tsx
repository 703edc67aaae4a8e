import { useState } from 'react';
import { Pager, Card, CardContent, CardHeader, CardTitle, EmptyState, ErrorState, LoadingRows, Table, TBody, TD, TH, THead, TR } from '@/components/ui';
import { absoluteTime, relativeTime } from '@/lib/format';
import { AUDIT_PAGE_SIZE, useAudit } from '../hooks/useAudit';

/** The project's audit trail: who changed what, and when (admins and owners). */
export function AuditSection({ projectId }: { projectId: number }) {
  const [page, setPage] = useState(1);
  const audit = useAudit(projectId, page);
  const pageCount = Math.max(1, Math.ceil((audit.data?.total ?? 0) / (audit.data?.page_size ?? AUDIT_PAGE_SIZE)));

  return (
    <Card aria-labelledby="audit-heading">
      <CardHeader>
        <CardTitle id="audit-heading">Activity</CardTitle>
      </CardHeader>
      <CardContent className="space-y-3">
        {audit.isPending ? (
          <LoadingRows label="Loading activity" />
        ) : audit.isError ? (
          <ErrorState title="Could not load activity" error={audit.error} onRetry={() => audit.refetch()} retrying={audit.isFetching} />
        ) : audit.data.items.length === 0 ? (
          <EmptyState title="No activity yet" />
        ) : (
          <>
            <Table aria-label="Activity">
              <THead>
                <TR>
                  <TH>What happened</TH>
                  <TH>When</TH>
                </TR>
              </THead>
              <TBody>
                {audit.data.items.map((e) => (
                  <TR key={e.id}>
                    <TD className="break-words" title={e.action}>
                      {e.description}
                    </TD>
                    <TD className="whitespace-nowrap text-zinc-600">
                      <time dateTime={e.created_at} title={absoluteTime(e.created_at)}>
                        {relativeTime(e.created_at)}
                      </time>
                    </TD>
                  </TR>
                ))}
              </TBody>
            </Table>
            {pageCount > 1 && (
              <Pager label="Activity pagination" page={page} pageCount={pageCount} onPage={setPage} />
            )}
          </>
        )}
      </CardContent>
    </Card>
  );
}
