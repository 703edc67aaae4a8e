import { render, screen } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch } from '@/test/utils';
import { makeQueryClient } from './queryClient';
import { routes } from './router';

afterEach(() => vi.restoreAllMocks());

describe('router', () => {
  it('loads a lazy first page without React Router\u2019s HydrateFallback warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    mockFetch(() => json({ code: 'UNAUTHORIZED', status: 401, message: 'Sign in', errors: {} }, 401));
    const router = createMemoryRouter(routes, { initialEntries: ['/register'] });
    render(
      <QueryClientProvider client={makeQueryClient({ retry: false })}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    expect(await screen.findByRole('button', { name: 'Create account' })).toBeInTheDocument();
    expect(warn.mock.calls.flat().join(' ')).not.toMatch(/HydrateFallback/);
  });
});
