import { Link, NavLink, Outlet, useMatch, useNavigate } from 'react-router-dom';
import { useLogout, useMe } from '@/features/auth/hooks/useAuth';
import { Button } from '@/components/ui';
import { focusRing } from '@/lib/cn';

const navClass = ({ isActive }: { isActive: boolean }) =>
  `rounded-xl text-sm hover:text-zinc-900 ${isActive ? 'font-medium text-zinc-900' : 'text-zinc-600'} ${focusRing}`;

/** The top bar (app name, the user's email, Sign out) above every signed-in page. */
export function AppShell() {
  const me = useMe();
  const logout = useLogout();
  const navigate = useNavigate();
  // The arena's three-pane workspace uses the width of a wide screen.
  const wide = useMatch('/arena/:challengeId') !== null;
  const width = wide ? 'max-w-[1400px]' : 'max-w-6xl';
  return (
    <div className="min-h-screen">
      <a
        href="#main"
        className={`sr-only rounded-xl bg-white px-3 py-2 text-sm font-medium text-indigo-700 focus:not-sr-only focus:absolute focus:left-4 focus:top-4 focus:z-50 ${focusRing}`}
      >
        Skip to content
      </a>
      <header className="border-b border-zinc-200 bg-white">
        {/* Wraps on a narrow screen rather than pushing Sign out off it. */}
        <nav aria-label="Main" className={`mx-auto flex min-h-14 ${width} flex-wrap items-center justify-between gap-x-4 gap-y-2 px-4 py-2 sm:px-6`}>
          <div className="flex items-center gap-4 sm:gap-6">
            <Link to="/projects" className={`rounded-xl text-base font-semibold text-zinc-900 ${focusRing}`}>
              Assay
            </Link>
            <NavLink to="/projects" className={navClass}>
              Projects
            </NavLink>
            <NavLink to="/arena" className={navClass}>
              Arena
            </NavLink>
            <NavLink to="/settings/tokens" className={navClass}>
              API tokens
            </NavLink>
          </div>
          <div className="flex min-w-0 items-center gap-3">
            {me.data && (
              <span className="min-w-0 max-w-[16rem] truncate text-sm text-zinc-600" title={me.data.email} data-testid="current-user">
                {me.data.email}
              </span>
            )}
            <Button
              variant="secondary"
              size="sm"
              loading={logout.isPending}
              onClick={() => logout.mutate(undefined, { onSettled: () => navigate('/login', { replace: true }) })}
            >
              Sign out
            </Button>
          </div>
        </nav>
      </header>
      <main id="main" className={`mx-auto min-w-0 ${width} p-4 sm:p-6`}>
        <Outlet />
      </main>
    </div>
  );
}
