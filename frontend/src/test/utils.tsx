import type { ReactElement, ReactNode } from 'react';
import { render } from '@testing-library/react';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { vi } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';

export function json(body: unknown, status = 200): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

/** Stubs global fetch with a handler that sees every Request. */
export function mockFetch(handler: (req: Request) => Response | Promise<Response>) {
  const fn = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = input instanceof Request ? input : new Request(input, init);
    return handler(req);
  });
  vi.stubGlobal('fetch', fn);
  return fn;
}

export function requestsOf(fn: ReturnType<typeof mockFetch>): Request[] {
  return fn.mock.calls.map(([input, init]) => (input instanceof Request ? input : new Request(input, init)));
}

export function renderWithProviders(
  ui: ReactElement,
  { route = '/', path = '*', client = makeQueryClient({ retry: false }) }: { route?: string; path?: string; client?: QueryClient } = {},
) {
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route path={path} element={children} />
          <Route path="/projects/:projectId" element={<p>Project page</p>} />
          <Route path="/login" element={<p>Login page</p>} />
          <Route path="/projects" element={<p>Projects page</p>} />
          <Route path="/projects/:projectId/runs/:runId" element={<p>Run page</p>} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>
  );
  return { client, ...render(ui, { wrapper }) };
}
