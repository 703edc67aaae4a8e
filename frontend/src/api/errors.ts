/** The one error body every API error has (DESIGN.md §7). */
export interface ApiErrorBody {
  code: string;
  status: number;
  message: string;
  errors: Record<string, unknown>;
  /** 412 STALE_WRITE: the resource as it is now, and its version (for If-Match). */
  current?: unknown;
  current_version?: number;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors: Record<string, unknown>;
  readonly current: unknown;
  readonly currentVersion: number | null;

  constructor(body: ApiErrorBody) {
    super(body.message);
    this.name = 'ApiError';
    this.status = body.status;
    this.code = body.code;
    this.errors = body.errors ?? {};
    this.current = body.current;
    this.currentVersion = typeof body.current_version === 'number' ? body.current_version : null;
  }
}

/** A write refused because it was based on an older version (412): `current` has the newer one. */
export function isStaleWrite(e: unknown): e is ApiError {
  return isApiError(e) && e.status === 412;
}

/** The header that makes a write fail (412) instead of replacing a newer version. */
export const ifMatch = (version: number | null | undefined): Record<string, string> =>
  version === null || version === undefined ? {} : { 'If-Match': `"${version}"` };

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

function isErrorBody(v: unknown): v is Partial<ApiErrorBody> {
  return typeof v === 'object' && v !== null && ('message' in v || 'code' in v);
}

const fallbackMessages: Record<number, string> = {
  400: 'The request was not valid.',
  401: 'Please sign in to continue.',
  403: 'You do not have permission to do that.',
  404: 'Not found.',
  409: 'That conflicts with the current state. Reload and try again.',
  412: 'This was changed since you opened it. Reload to see the newer version.',
  422: 'Some fields are not valid.',
  423: 'This account is locked. Try again later.',
  429: 'Too many requests. Wait a moment and try again.',
  502: 'The API server is not reachable.',
  503: 'The service is unavailable. Try again shortly.',
};

/** Builds an ApiError from a response status and whatever body came with it. */
export function toApiError(status: number, body: unknown): ApiError {
  if (isErrorBody(body)) {
    return new ApiError({
      code: typeof body.code === 'string' ? body.code : `HTTP_${status}`,
      status: typeof body.status === 'number' ? body.status : status,
      message:
        typeof body.message === 'string' && body.message
          ? body.message
          : (fallbackMessages[status] ?? `Request failed (${status}).`),
      errors: (typeof body.errors === 'object' && body.errors !== null ? body.errors : {}) as Record<string, unknown>,
      current: (body as Partial<ApiErrorBody>).current,
      current_version: (body as Partial<ApiErrorBody>).current_version,
    });
  }
  return new ApiError({
    code: `HTTP_${status}`,
    status,
    message: fallbackMessages[status] ?? `Request failed (${status}).`,
    errors: {},
  });
}

export const networkError = () =>
  new ApiError({
    code: 'NETWORK_ERROR',
    status: 0,
    message: 'Could not reach the server. Check your connection and try again.',
    errors: {},
  });

/** A human sentence for any thrown value. */
export function errorMessage(e: unknown): string {
  if (isApiError(e)) return e.message;
  if (e instanceof Error && e.message) return e.message;
  return 'Something went wrong.';
}

/**
 * Flattens webargs-style field errors, e.g. {"json": {"password": ["Too short."]}},
 * into {password: "Too short."}. Nested fields become dotted paths.
 */
export function fieldErrors(e: unknown): Record<string, string> {
  if (!isApiError(e)) return {};
  const out: Record<string, string> = {};
  const walk = (node: unknown, path: string) => {
    if (typeof node === 'string') {
      if (path && !(path in out)) out[path] = node;
    } else if (Array.isArray(node)) {
      const first = node.find((x) => typeof x === 'string');
      if (typeof first === 'string') walk(first, path);
      else node.forEach((x) => walk(x, path));
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) walk(v, path ? `${path}.${k}` : k);
    }
  };
  const locations = ['json', 'query', 'form', 'path', 'headers'];
  for (const [k, v] of Object.entries(e.errors)) {
    walk(v, locations.includes(k) ? '' : k);
  }
  return out;
}
