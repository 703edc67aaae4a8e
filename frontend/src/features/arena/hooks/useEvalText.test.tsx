import type { ReactNode } from 'react';
import { act, renderHook, waitFor } from '@testing-library/react';
import { QueryClientProvider } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { makeQueryClient } from '@/app/queryClient';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { challengeOf } from '../testFixtures';
import { useEvalText } from './useEvalText';

const stale = (text: string, version: number) =>
  json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: { tab: 'rules', text, row_version: version }, current_version: version }, 412);
const savedDraft = (text: string, version: number) => json({ tab: 'rules', text, saved_at: '2026-01-01T00:00:00Z', row_version: version });

function setup(handler: (req: Request, body: { text: string }) => Response | Promise<Response>) {
  const fetch = mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    if (path.endsWith('/validate')) return json({ ok: true, problems: [] });
    if (path.includes('/drafts/')) return handler(req, (await req.clone().json()) as { text: string });
    return json({ code: 'not_found', status: 404, message: 'Not found', errors: {} }, 404);
  });
  const client = makeQueryClient({ retry: false });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
  const challenge = challengeOf();
  challenge.tabs.rules.draft_row_version = 2;
  const hook = renderHook(() => useEvalText(challenge, 'rules'), { wrapper });
  const puts = () => requestsOf(fetch).filter((r) => r.method === 'PUT');
  return { hook, puts };
}

describe('useEvalText: an arena draft save names the version it is based on', { timeout: 15_000 }, () => {
  it('a stale save overwrites nothing; Reload shows the newer draft and the next save is based on it', async () => {
    const { hook, puts } = setup((req, body) => (req.headers.get('If-Match') === '"2"' ? stale('theirs', 5) : savedDraft(body.text, 6)));
    await waitFor(() => expect(hook.result.current.ready).toBe(true));
    act(() => hook.result.current.setText('mine'));
    await waitFor(() => expect(hook.result.current.stale).not.toBeNull(), { timeout: 3000 });
    expect(hook.result.current.stale?.text).toBe('mine');
    expect(hook.result.current.saveState).toBe('conflict');
    expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"2"']);

    // more typing while it asks sends nothing over the newer draft
    act(() => hook.result.current.setText('mine, more'));
    await new Promise((r) => setTimeout(r, 1200));
    expect(puts()).toHaveLength(1);

    act(() => hook.result.current.reload());
    expect(hook.result.current.text).toBe('theirs');
    expect(hook.result.current.stale).toBeNull();
    act(() => hook.result.current.setText('theirs, then mine'));
    await waitFor(() => expect(hook.result.current.saveState).toBe('saved'), { timeout: 3000 });
    expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"2"', '"5"']);
  });

  it('Keep mine sends the current text based on the version the refusal named', async () => {
    const { hook, puts } = setup((req, body) => (req.headers.get('If-Match') === '"2"' ? stale('theirs', 5) : savedDraft(body.text, 6)));
    await waitFor(() => expect(hook.result.current.ready).toBe(true));
    act(() => hook.result.current.setText('mine'));
    await waitFor(() => expect(hook.result.current.stale).not.toBeNull(), { timeout: 3000 });
    act(() => hook.result.current.keepMine());
    await waitFor(() => expect(hook.result.current.saveState).toBe('saved'));
    expect(hook.result.current.stale).toBeNull();
    expect(hook.result.current.text).toBe('mine');
    expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"2"', '"5"']);
  });

  it('a save made while the previous one is in flight waits for it and is based on its version', async () => {
    let version = 2;
    let release: () => void = () => undefined;
    const { hook, puts } = setup(async (req, body) => {
      if (req.headers.get('If-Match') !== `"${version}"`) return stale(body.text, version);
      if (version === 2) await new Promise<void>((r) => (release = r)); // the first save is slow
      version += 1;
      return savedDraft(body.text, version);
    });
    await waitFor(() => expect(hook.result.current.ready).toBe(true));
    act(() => hook.result.current.setText('first'));
    await waitFor(() => expect(puts()).toHaveLength(1), { timeout: 3000 });
    act(() => hook.result.current.setText('first and second'));
    await new Promise((r) => setTimeout(r, 1200)); // its debounce has passed: it is queued, not sent
    expect(puts()).toHaveLength(1);
    release();
    await waitFor(() => expect(puts()).toHaveLength(2));
    await waitFor(() => expect(hook.result.current.saveState).toBe('saved'));
    expect(hook.result.current.stale).toBeNull();
    expect(puts().map((r) => r.headers.get('If-Match'))).toEqual(['"2"', '"3"']);
  });
});
