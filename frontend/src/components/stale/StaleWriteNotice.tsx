import { Alert, Button } from '@/components/ui';
import { isStaleWrite } from '@/api/errors';

/**
 * Shown when a save was refused (412 STALE_WRITE) because someone changed the resource since it
 * was loaded. Nothing is overwritten: the user's edit stays in the form and is repeated here;
 * Reload refetches the latest so they can re-apply it.
 */
export function StaleWriteNotice({ error, edit, onReload }: { error: unknown; edit?: string; onReload: () => void }) {
  if (!isStaleWrite(error)) return null;
  return (
    <Alert>
      <p>This was changed elsewhere — reload to see the latest; your edit{edit ? ':' : ' is kept in the form.'}</p>
      {edit && <pre className="mt-1 whitespace-pre-wrap break-words text-xs">{edit}</pre>}
      <Button variant="secondary" className="mt-2" onClick={onReload}>
        Reload
      </Button>
    </Alert>
  );
}
