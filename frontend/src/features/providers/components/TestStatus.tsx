import { Badge } from '@/components/ui';
import type { Credential } from '@/api/providerTypes';
import { absoluteTime, relativeTime } from '@/lib/format';

/** The last connection test the server recorded: ok, failed with its error, or never. */
export function TestStatus({ credential: c }: { credential: Pick<Credential, 'last_test_ok' | 'last_test_error' | 'last_tested_at'> }) {
  if (c.last_test_ok === null || c.last_test_ok === undefined || !c.last_tested_at) {
    return <Badge tone="neutral">Never tested</Badge>;
  }
  const when = (
    <span className="text-sm text-zinc-500" title={absoluteTime(c.last_tested_at)}>
      {relativeTime(c.last_tested_at)}
    </span>
  );
  if (c.last_test_ok) {
    return (
      <div className="flex flex-wrap items-center gap-2">
        <Badge tone="success">OK</Badge>
        {when}
      </div>
    );
  }
  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center gap-2">
        <Badge tone="danger">Failed</Badge>
        {when}
      </div>
      {c.last_test_error && <p className="max-w-xs break-words text-sm text-red-700">{c.last_test_error}</p>}
    </div>
  );
}

/** "••••1234 · stored", "$OPENAI_API_KEY · environment", "No key". */
export function KeyCell({ credential: c }: { credential: Pick<Credential, 'key_hint' | 'key_source' | 'secret_env'> }) {
  if (c.key_source === 'env') {
    return (
      <div>
        <code className="text-sm">{c.secret_env ? `$${c.secret_env}` : 'environment'}</code>
        <div className="text-sm text-zinc-500">From the environment</div>
      </div>
    );
  }
  if (c.key_source === 'stored') {
    return (
      <div>
        <span className="font-mono text-sm">
          {c.key_hint ?? '••••'}
        </span>
        <div className="text-sm text-zinc-500">Stored, encrypted</div>
      </div>
    );
  }
  return <span className="text-sm text-zinc-500">No key</span>;
}
