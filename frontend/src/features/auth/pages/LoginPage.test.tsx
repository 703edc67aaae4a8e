import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { qk } from '@/api/queryKeys';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { LoginPage } from './LoginPage';

const user = { id: 1, email: 'ada@example.com', name: null, created_at: '2024-01-01T00:00:00Z' };

async function signIn(email = 'ada@example.com', password = 'Abcdefgh1!xy') {
  await userEvent.type(screen.getByLabelText('Email'), email);
  await userEvent.type(screen.getByLabelText('Password'), password);
  await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('LoginPage', () => {
  it.each([
    [401, 'INVALID_CREDENTIALS', 'Invalid email or password'],
    [423, 'ACCOUNT_LOCKED', 'Account locked until 12:30 UTC'],
    [429, 'RATE_LIMITED', 'Too many attempts; try again in 60 seconds'],
  ])('shows the server message for %i %s', async (status, code, message) => {
    mockFetch(() => json({ code, status, message, errors: {} }, status));
    renderWithProviders(<LoginPage />, { route: '/login', path: '/login' });
    await signIn();
    expect(await screen.findByRole('alert')).toHaveTextContent(message);
  });

  it('sends remember_me and stores the user on success', async () => {
    const fetch = mockFetch(() => json({ user, csrf_token: 'tok' }));
    const { client } = renderWithProviders(<LoginPage />, { route: '/login?next=/projects/3', path: '/login' });
    await userEvent.click(screen.getByLabelText('Remember me'));
    await signIn();
    expect(await screen.findByText('Project page')).toBeInTheDocument();
    expect(await requestsOf(fetch)[0].json()).toEqual({ email: 'ada@example.com', password: 'Abcdefgh1!xy', remember_me: true });
    expect(client.getQueryData(qk.me)).toEqual(user);
  });

  it('asks for missing fields without calling the server', async () => {
    const fetch = mockFetch(() => json({ user, csrf_token: 'tok' }));
    renderWithProviders(<LoginPage />, { route: '/login', path: '/login' });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByText('Enter your email address.')).toBeInTheDocument();
    expect(screen.getByText('Enter your password.')).toBeInTheDocument();
    expect(fetch).not.toHaveBeenCalled();
  });
});
