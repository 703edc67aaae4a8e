import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router-dom';
import { Alert, Button, Checkbox, describedBy, Field, Input, Label } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { focusRing } from '@/lib/cn';
import { safeNext } from '@/lib/safeNext';
import { AuthLayout } from '../components/AuthLayout';
import { PasswordInput } from '../components/PasswordInput';
import { useLogin } from '../hooks/useAuth';

interface LoginLocationState {
  email?: string;
}

export function LoginPage() {
  const location = useLocation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const state = (location.state ?? {}) as LoginLocationState;
  const login = useLogin();
  const [email, setEmail] = useState(state.email ?? '');
  const [password, setPassword] = useState('');
  const [rememberMe, setRememberMe] = useState(false);
  const [missing, setMissing] = useState<{ email?: string; password?: string }>({});

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const m: typeof missing = {};
    if (!email.trim()) m.email = 'Enter your email address.';
    if (!password) m.password = 'Enter your password.';
    setMissing(m);
    if (m.email || m.password) return;
    login.mutate(
      { email: email.trim(), password, remember_me: rememberMe },
      { onSuccess: () => navigate(safeNext(params.get('next')), { replace: true }) },
    );
  }

  return (
    <AuthLayout title="Sign in" subtitle="Welcome back.">
      <form noValidate onSubmit={onSubmit} className="space-y-4">
        {login.isError && <Alert>{errorMessage(login.error)}</Alert>}
        <Field id="email" label="Email" error={missing.email}>
          <Input
            id="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            invalid={!!missing.email}
            aria-describedby={describedBy('email', missing.email)}
          />
        </Field>
        <Field id="password" label="Password" error={missing.password}>
          <PasswordInput
            id="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            invalid={!!missing.password}
            aria-describedby={describedBy('password', missing.password)}
          />
        </Field>
        <div className="flex items-center gap-2">
          <Checkbox id="remember_me" checked={rememberMe} onChange={(e) => setRememberMe(e.target.checked)} />
          <Label htmlFor="remember_me" className="font-normal">
            Remember me
          </Label>
        </div>
        <Button type="submit" className="w-full" loading={login.isPending}>
          Sign in
        </Button>
        <p className="text-center text-sm text-zinc-600">
          New to Assay?{' '}
          <Link to="/register" className={`rounded-xl font-medium text-indigo-600 hover:text-indigo-700 ${focusRing}`}>
            Create an account
          </Link>
        </p>
      </form>
    </AuthLayout>
  );
}
