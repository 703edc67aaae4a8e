import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { Alert, Button, describedBy, Field, Input } from '@/components/ui';
import { errorMessage, fieldErrors, isApiError } from '@/api/errors';
import { checkPassword } from '@/lib/password';
import { focusRing } from '@/lib/cn';
import { AuthLayout } from '../components/AuthLayout';
import { PasswordChecklist } from '../components/PasswordChecklist';
import { PasswordInput } from '../components/PasswordInput';
import { useRegister } from '../hooks/useAuth';

type Errors = Partial<Record<'name' | 'email' | 'password' | 'confirm_password', string>>;

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function validateRegistration(v: { name: string; email: string; password: string; confirm: string }): Errors {
  const errors: Errors = {};
  if (v.name.length > 100) errors.name = 'Name must be at most 100 characters.';
  if (!v.email.trim()) errors.email = 'Enter your email address.';
  else if (!EMAIL_RE.test(v.email.trim())) errors.email = 'Enter a valid email address.';
  if (!v.password) errors.password = 'Choose a password.';
  else if (!checkPassword(v.password).valid) errors.password = 'The password does not meet every requirement below.';
  if (!v.confirm) errors.confirm_password = 'Repeat the password.';
  else if (v.confirm !== v.password) errors.confirm_password = 'The passwords do not match.';
  return errors;
}

export function RegisterPage() {
  const navigate = useNavigate();
  const register = useRegister();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);

  const clientErrors = submitted ? validateRegistration({ name, email, password, confirm }) : {};
  const errors: Errors = { ...serverErrors, ...clientErrors };

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSubmitted(true);
    setServerErrors({});
    setFormError(null);
    if (Object.keys(validateRegistration({ name, email, password, confirm })).length > 0) return;
    register.mutate(
      { email: email.trim(), name: name.trim() || null, password, confirm_password: confirm },
      {
        onSuccess: () => navigate('/projects', { replace: true }),
        onError: (err) => {
          if (isApiError(err) && err.code === 'EMAIL_TAKEN') {
            setServerErrors({ email: err.message || 'An account with this email already exists.' });
            return;
          }
          const fields = fieldErrors(err) as Errors;
          if (Object.keys(fields).length > 0) setServerErrors(fields);
          else setFormError(errorMessage(err));
        },
      },
    );
  }

  return (
    <AuthLayout title="Create your account" subtitle="Evaluate models and prompts with your team.">
      <form noValidate onSubmit={onSubmit} className="space-y-4">
        {formError && <Alert>{formError}</Alert>}
        <Field id="name" label="Name (optional)" error={errors.name}>
          <Input
            id="name"
            autoComplete="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            invalid={!!errors.name}
            aria-describedby={describedBy('name', errors.name)}
          />
        </Field>
        <Field id="email" label="Email" error={errors.email}>
          <Input
            id="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => {
              setEmail(e.target.value);
              setServerErrors((s) => ({ ...s, email: undefined }));
            }}
            invalid={!!errors.email}
            aria-describedby={describedBy('email', errors.email)}
          />
        </Field>
        <Field id="password" label="Password" error={errors.password}>
          <PasswordInput
            id="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            invalid={!!errors.password}
            aria-describedby={[describedBy('password', errors.password), 'password-rules'].filter(Boolean).join(' ')}
          />
        </Field>
        <PasswordChecklist id="password-rules" password={password} />
        <Field id="confirm_password" label="Confirm password" error={errors.confirm_password}>
          <PasswordInput
            id="confirm_password"
            autoComplete="new-password"
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            invalid={!!errors.confirm_password}
            aria-describedby={describedBy('confirm_password', errors.confirm_password)}
            toggleLabel="confirmation"
          />
        </Field>
        <Button type="submit" className="w-full" loading={register.isPending}>
          Create account
        </Button>
        <p className="text-center text-sm text-zinc-600">
          Already have an account?{' '}
          <Link to="/login" className={`rounded-xl font-medium text-indigo-600 hover:text-indigo-700 ${focusRing}`}>
            Sign in
          </Link>
        </p>
      </form>
    </AuthLayout>
  );
}
