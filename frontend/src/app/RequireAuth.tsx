import { Navigate, Outlet, useLocation, useSearchParams } from 'react-router-dom';
import { safeNext } from '@/lib/safeNext';
import { useMe } from '@/features/auth/hooks/useAuth';
import { ErrorState, LoadingRows } from '@/components/ui';

function FullPage({ children }: { children: React.ReactNode }) {
  return <div className="mx-auto w-full max-w-md p-6 pt-24">{children}</div>;
}

/** Renders child routes for a signed-in user; otherwise sends them to /login. */
export function RequireAuth() {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) {
    return (
      <FullPage>
        <LoadingRows label="Checking your session" rows={2} />
      </FullPage>
    );
  }
  if (me.isError) {
    return (
      <FullPage>
        <ErrorState title="Could not check your session" error={me.error} onRetry={() => me.refetch()} retrying={me.isFetching} />
      </FullPage>
    );
  }
  if (!me.data) {
    const next = location.pathname + location.search;
    return <Navigate to={`/login?next=${encodeURIComponent(next)}`} replace />;
  }
  return <Outlet />;
}

/** Sign-in and registration pages: a signed-in user goes straight to projects. */
export function PublicOnly() {
  const me = useMe();
  const [params] = useSearchParams();
  if (me.data) return <Navigate to={safeNext(params.get('next'))} replace />;
  return <Outlet />;
}
