import { Alert, Button } from '@/components/ui';
import { isStaleWrite } from '@/api/errors';

/**
 * Shown when a save was refused (412 STALE_WRITE) because someone changed the resource since it
 * was loaded. Nothing is overwritten: the user's edit stays in the form and is repeated here;
 * Reload refetches the latest so they can re-apply it, and Keep mine (when offered) sends the
 * edit again based on the newer version: replacing it is then the user's choice, never a race.
 */
export function StaleWriteNotice({
  error,
  edit,
  onReload,
  onKeepMine,
  keeping = false,
  className,
}: {
  error: unknown;
  edit?: string;
  onReload: () => void;
  onKeepMine?: () => void;
  keeping?: boolean;
  className?: string;
}) {
  if (!isStaleWrite(error)) return null;
  return (
    <Alert className={className}>
      <p>This was changed elsewhere — reload to see the latest; your edit{edit ? ':' : ' is kept in the form.'}</p>
      {edit && <pre className="mt-1 max-h-40 overflow-auto whitespace-pre-wrap break-words rounded-lg bg-white/60 p-2 text-xs">{edit}</pre>}
      <div className="mt-2 flex flex-wrap gap-2">
        <Button variant="secondary" size="sm" onClick={onReload} disabled={keeping}>
          Reload
        </Button>
        {onKeepMine && (
          <Button variant="danger" size="sm" onClick={onKeepMine} loading={keeping}>
            Keep mine
          </Button>
        )}
      </div>
    </Alert>
  );
}
