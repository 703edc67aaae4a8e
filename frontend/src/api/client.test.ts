import { describe, expect, it } from 'vitest';
import { CSRF_HEADER, createApiClient, readCookie, setCsrfToken, unwrap } from './client';
import { ApiError } from './errors';
import { json, mockFetch, requestsOf } from '@/test/utils';

const project = {
  id: 1, name: 'P', slug: 'p', description: null, role: 'owner', member_count: 1,
  created_at: '2024-01-01T00:00:00Z', updated_at: '2024-01-01T00:00:00Z',
};

describe('readCookie', () => {
  it('finds a cookie among others and decodes it', () => {
    expect(readCookie('assay_csrf', 'a=1; assay_csrf=x%2By; b=2')).toBe('x+y');
    expect(readCookie('assay_csrf', 'a=1; not_assay_csrf=z')).toBeNull();
    expect(readCookie('assay_csrf', '')).toBeNull();
  });
});

describe('CSRF middleware', () => {
  it('sends the assay_csrf cookie as X-CSRF-Token on unsafe methods only', async () => {
    document.cookie = 'assay_csrf=tok-123; path=/';
    const fetch = mockFetch((req) => (req.method === 'DELETE' ? new Response(null, { status: 204 }) : json(project, req.method === 'POST' ? 201 : 200)));
    const api = createApiClient('http://localhost');

    await api.GET('/api/projects/{project_id}', { params: { path: { project_id: 1 } } });
    await api.POST('/api/projects', { body: { name: 'P' } });
    await api.PATCH('/api/projects/{project_id}', { params: { path: { project_id: 1 } }, body: { name: 'Q' } });
    await api.DELETE('/api/projects/{project_id}', { params: { path: { project_id: 1 } } });

    const reqs = requestsOf(fetch);
    expect(reqs.map((r) => [r.method, r.headers.get(CSRF_HEADER)])).toEqual([
      ['GET', null],
      ['POST', 'tok-123'],
      ['PATCH', 'tok-123'],
      ['DELETE', 'tok-123'],
    ]);
    expect(reqs.every((r) => r.credentials === 'same-origin')).toBe(true);
  });

  it('reads the cookie at request time, so a new login token is used', async () => {
    const fetch = mockFetch(() => json(project, 201));
    const api = createApiClient('http://localhost');
    document.cookie = 'assay_csrf=first; path=/';
    await api.POST('/api/projects', { body: { name: 'P' } });
    document.cookie = 'assay_csrf=second; path=/';
    await api.POST('/api/projects', { body: { name: 'P' } });
    expect(requestsOf(fetch).map((r) => r.headers.get(CSRF_HEADER))).toEqual(['first', 'second']);
  });

  it('falls back to the token from the login response when there is no cookie', async () => {
    const fetch = mockFetch(() => json(project, 201));
    const api = createApiClient('http://localhost');
    await api.POST('/api/projects', { body: { name: 'P' } });
    setCsrfToken('from-login');
    await api.POST('/api/projects', { body: { name: 'P' } });
    setCsrfToken(null);
    expect(requestsOf(fetch).map((r) => r.headers.get(CSRF_HEADER))).toEqual([null, 'from-login']);
  });
});

describe('unwrap', () => {
  it('throws an ApiError carrying the server message and code', async () => {
    mockFetch(() => json({ code: 'EMAIL_TAKEN', status: 409, message: 'That email is taken', errors: {} }, 409));
    const api = createApiClient('http://localhost');
    const err = await unwrap(
      api.POST('/api/auth/register', { body: { email: 'a@b.c', password: 'x', confirm_password: 'x' } }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 409, code: 'EMAIL_TAKEN', message: 'That email is taken' });
  });

  it('turns a non-JSON error into a readable ApiError', async () => {
    mockFetch(() => new Response('<html>Bad Gateway</html>', { status: 502 }));
    const api = createApiClient('http://localhost');
    const err = await unwrap(api.GET('/api/auth/me')).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: 'HTTP_502', message: 'The API server is not reachable.' });
  });

  it('turns a network failure into status 0', async () => {
    mockFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    const api = createApiClient('http://localhost');
    const err = await unwrap(api.GET('/api/auth/me')).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
  });
});
