import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { isApiError } from '@/api/errors';
import { qk } from '@/api/queryKeys';

/**
 * Retries only what may heal by itself (network errors, 5xx); any 401 marks
 * the session as gone, which sends the user to the sign-in page.
 */
export function makeQueryClient(options: { retry?: boolean } = {}) {
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError: (error, query) => {
        if (isApiError(error) && error.status === 401 && query.queryKey[0] !== 'me') {
          client.setQueryData(qk.me, null);
        }
      },
    }),
    mutationCache: new MutationCache({
      onError: (error, _vars, _ctx, mutation) => {
        if (isApiError(error) && error.status === 401 && !mutation.options.meta?.anonymous) {
          client.setQueryData(qk.me, null);
        }
      },
    }),
    defaultOptions: {
      queries: {
        retry:
          options.retry === false
            ? false
            : (count, error) => count < 2 && (!isApiError(error) || error.status === 0 || error.status >= 500),
        refetchOnWindowFocus: false,
        staleTime: 10_000,
      },
      mutations: { retry: false },
    },
  });
  return client;
}
