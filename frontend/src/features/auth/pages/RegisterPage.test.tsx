import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { RegisterPage } from './RegisterPage';

const user = { id: 1, email: 'ada@example.com', name: 'Ada', created_at: '2024-01-01T00:00:00Z' };
const signedIn = { user, csrf_token: 'csrf-1' };

describe('RegisterPage', () => {
  it('ticks each password rule live and rates the strength', async () => {
    mockFetch(() => json(signedIn, 201));
    renderWithProviders(<RegisterPage />);
    const rules = screen.getByRole('list', { name: 'Password requirements' });
    const met = () => within(rules).queryAllByText('(met)').length;
    expect(met()).toBe(0);
    await userEvent.type(screen.getByLabelText('Password'), 'abc');
    expect(met()).toBe(1);
    expect(screen.getByTestId('password-strength')).toHaveTextContent('Weak');
    await userEvent.type(screen.getByLabelText('Password'), 'DEF1');
    expect(met()).toBe(3);
    expect(screen.getByTestId('password-strength')).toHaveTextContent('Fair');
    await userEvent.type(screen.getByLabelText('Password'), '!ghijk');
    expect(met()).toBe(5);
    expect(screen.getByTestId('password-strength')).toHaveTextContent('Good');
  });

  it('shows and hides the password', async () => {
    renderWithProviders(<RegisterPage />);
    const input = screen.getByLabelText('Password');
    expect(input).toHaveAttribute('type', 'password');
    await userEvent.click(screen.getByRole('button', { name: 'Show password' }));
    expect(input).toHaveAttribute('type', 'text');
    await userEvent.click(screen.getByRole('button', { name: 'Hide password' }));
    expect(input).toHaveAttribute('type', 'password');
  });

  it('validates before sending anything', async () => {
    const fetch = mockFetch(() => json(signedIn, 201));
    renderWithProviders(<RegisterPage />);
    await userEvent.type(screen.getByLabelText('Email'), 'ada@example');
    await userEvent.type(screen.getByLabelText('Password'), 'Short1!');
    await userEvent.type(screen.getByLabelText('Confirm password'), 'Other1!');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(screen.getByText('Enter a valid email address.')).toBeInTheDocument();
    expect(screen.getByText('The password does not meet every requirement below.')).toBeInTheDocument();
    expect(screen.getByText('The passwords do not match.')).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'true');
    expect(fetch).not.toHaveBeenCalled();
  });

  it('registers, is signed in and lands on the projects; a taken email is shown on the field', async () => {
    let taken = true;
    const fetch = mockFetch(() =>
      taken
        ? json({ code: 'EMAIL_TAKEN', status: 409, message: 'Email already in use', errors: {} }, 409)
        : json(signedIn, 201),
    );
    renderWithProviders(<RegisterPage />);
    await userEvent.type(screen.getByLabelText('Name (optional)'), 'Ada');
    await userEvent.type(screen.getByLabelText('Email'), 'ada@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'Abcdefgh1!xy');
    await userEvent.type(screen.getByLabelText('Confirm password'), 'Abcdefgh1!xy');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Email already in use')).toBeInTheDocument();

    taken = false;
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Projects page')).toBeInTheDocument();
    const body = await requestsOf(fetch).at(-1)!.json();
    expect(body).toEqual({ email: 'ada@example.com', name: 'Ada', password: 'Abcdefgh1!xy', confirm_password: 'Abcdefgh1!xy' });
  });

  it('puts server field errors next to their fields', async () => {
    mockFetch(() =>
      json({ code: 'VALIDATION_ERROR', status: 422, message: 'Invalid input', errors: { json: { password: ['Password is too common.'] } } }, 422),
    );
    renderWithProviders(<RegisterPage />);
    await userEvent.type(screen.getByLabelText('Email'), 'ada@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'Abcdefgh1!xy');
    await userEvent.type(screen.getByLabelText('Confirm password'), 'Abcdefgh1!xy');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Password is too common.')).toBeInTheDocument();
  });
});
