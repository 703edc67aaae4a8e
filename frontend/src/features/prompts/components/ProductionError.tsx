import { useQueryClient } from '@tanstack/react-query';
import { Alert } from '@/components/ui';
import { errorMessage, isStaleWrite } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import { StaleWriteNotice } from '@/components/stale/StaleWriteNotice';
import type { useSetProduction } from '../hooks/usePrompts';

type Mutation = ReturnType<typeof useSetProduction>;

/**
 * A refused "Mark production": when someone marked another version since this page loaded
 * (412), say so and let the user reload or keep their choice; any other error as an alert.
 */
export function ProductionError({ projectId, production, numberOf }: { projectId: number; production: Mutation; numberOf: (versionId: number) => number | undefined }) {
  const queryClient = useQueryClient();
  if (!production.isError) return null;
  const stale = isStaleWrite(production.error) ? production.error : null;
  if (!stale) return <Alert>{errorMessage(production.error)}</Alert>;
  const wanted = production.variables;
  return (
    <StaleWriteNotice
      error={stale}
      edit={wanted ? `Production: v${numberOf(wanted.versionId) ?? '?'}` : undefined}
      onReload={() => {
        production.reset();
        void queryClient.invalidateQueries({ queryKey: qk.prompts(projectId) });
      }}
      onKeepMine={wanted ? () => production.mutate({ versionId: wanted.versionId, version: stale.currentVersion }) : undefined}
      keeping={production.isPending}
    />
  );
}
