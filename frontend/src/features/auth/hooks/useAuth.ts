import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, setCsrfToken, unwrap } from '@/api/client';
import { isApiError } from '@/api/errors';
import { qk } from '@/api/queryKeys';
import type { LoginBody, RegisterBody, User } from '@/api/types';

/** The signed-in user, or null when the session is missing or expired. */
export function useMe() {
  return useQuery<User | null>({
    queryKey: qk.me,
    queryFn: async () => {
      try {
        return await unwrap(api.GET('/api/auth/me'));
      } catch (e) {
        if (isApiError(e) && e.status === 401) return null;
        throw e;
      }
    },
    staleTime: 5 * 60_000,
  });
}

/** After sign-in or registration (both answer {user, csrf_token} and set the cookies). */
function useSignedIn() {
  const queryClient = useQueryClient();
  return (data: { user: User; csrf_token: string }) => {
    setCsrfToken(data.csrf_token);
    // Another user's cached data must never be shown to this one.
    queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'me' });
    queryClient.setQueryData(qk.me, data.user);
  };
}

export function useLogin() {
  const signedIn = useSignedIn();
  return useMutation({
    mutationFn: (body: LoginBody) => unwrap(api.POST('/api/auth/login', { body })),
    meta: { anonymous: true },
    onSuccess: signedIn,
  });
}

/** Registering signs the new user in, as sign-in does. */
export function useRegister() {
  const signedIn = useSignedIn();
  return useMutation({
    mutationFn: (body: RegisterBody) => unwrap(api.POST('/api/auth/register', { body })),
    meta: { anonymous: true },
    onSuccess: signedIn,
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/auth/logout')),
    onSettled: () => {
      setCsrfToken(null);
      queryClient.clear();
      queryClient.setQueryData(qk.me, null);
    },
  });
}
