import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { TokensPage } from './TokensPage';

const ts = '2024-01-01T00:00:00Z';
const token = { id: 4, name: 'CI', prefix: 'asy_ab12', created_at: ts, last_used_at: null };

describe('TokensPage', () => {
  it('creates a token, shows the secret once, and revokes after confirmation', async () => {
    let items: unknown[] = [];
    const fetch = mockFetch((req) => {
      if (req.method === 'POST') {
        items = [token];
        return json({ ...token, token: 'asy_ab12_SECRET' }, 201);
      }
      if (req.method === 'DELETE') {
        items = [];
        return new Response(null, { status: 204 });
      }
      return json({ items });
    });
    renderWithProviders(<TokensPage />);
    expect(await screen.findByText('No tokens')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Create token' }));
    expect(screen.getByText('Give the token a name, such as "CI".')).toBeInTheDocument();

    await userEvent.type(screen.getByLabelText('Token name'), 'CI');
    await userEvent.click(screen.getByRole('button', { name: 'Create token' }));
    expect(await screen.findByTestId('new-token')).toHaveTextContent('asy_ab12_SECRET');
    const table = await screen.findByRole('table', { name: 'API tokens' });
    expect(within(table).getByText('Never')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Revoke CI' }));
    await userEvent.click(within(screen.getByRole('dialog', { name: 'Revoke token' })).getByRole('button', { name: 'Revoke token' }));
    expect(await screen.findByText('No tokens')).toBeInTheDocument();
    const del = requestsOf(fetch).find((r) => r.method === 'DELETE')!;
    expect(new URL(del.url).pathname).toBe('/api/auth/tokens/4');
  });
});
