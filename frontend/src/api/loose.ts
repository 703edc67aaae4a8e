// A loosely typed view of the same client (same fetch, cookies and CSRF middleware)
// for routes that the backend is still building and that are not yet in openapi.json.
// Once `make api-types` brings a route in, its hook moves to the typed `api`.
import { api } from './client';

type Init = {
  params?: { path?: Record<string, unknown>; query?: Record<string, unknown> };
  body?: unknown;
  signal?: AbortSignal;
};
type Result = Promise<{ data?: unknown; error?: unknown; response: Response }>;
type LooseMethod = (path: string, init?: Init) => Result;

export const looseApi = api as unknown as {
  GET: LooseMethod;
  POST: LooseMethod;
  PATCH: LooseMethod;
  PUT: LooseMethod;
  DELETE: LooseMethod;
};
