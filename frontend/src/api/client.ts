import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';
import { networkError, toApiError } from './errors';

export const CSRF_COOKIE = 'assay_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function readCookie(name: string, cookies: string = typeof document === 'undefined' ? '' : document.cookie) {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
  }
  return null;
}

// The login response also returns the token: kept as a fallback for when the
// cookie cannot be read (it normally can: assay_csrf is not HttpOnly).
let csrfFallback: string | null = null;

export function setCsrfToken(token: string | null) {
  csrfFallback = token;
}

export function currentCsrfToken(): string | null {
  return readCookie(CSRF_COOKIE) ?? csrfFallback;
}

/** Double-submit CSRF: every unsafe request carries the token from the cookie. */
export const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (SAFE_METHODS.has(request.method.toUpperCase())) return undefined;
    const token = currentCsrfToken();
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

function defaultBaseUrl() {
  return typeof window !== 'undefined' && window.location ? window.location.origin : '';
}

export function createApiClient(baseUrl: string = defaultBaseUrl()) {
  const client = createClient<paths>({
    baseUrl,
    credentials: 'same-origin',
    // Resolved at call time so tests can stub globalThis.fetch.
    fetch: (request: Request) => globalThis.fetch(request),
  });
  client.use(csrfMiddleware);
  return client;
}

export const api = createApiClient();
export type ApiClient = ReturnType<typeof createApiClient>;

type FetchResult<T> = { data?: T; error?: unknown; response: Response };

/** Resolves to the response body, or throws an ApiError with the server's message. */
export async function unwrap<T>(promise: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await promise;
  } catch {
    throw networkError();
  }
  if (result.error !== undefined || !result.response.ok) {
    throw toApiError(result.response.status, result.error);
  }
  return result.data as T;
}
