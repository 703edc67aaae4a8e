import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, credential, kinds, page, project, ts } from '@/test/providerFixtures';

type Extra = (req: Request, path: string) => Response | Promise<Response> | undefined;

function serve(role: string, items: unknown[], extra: Extra = () => undefined) {
  return mockFetch(async (req) => {
    const path = new URL(req.url).pathname;
    const hit = await extra(req, path);
    if (hit) return hit;
    if (path === '/api/projects/3') return json(project(role));
    if (path === '/api/provider-kinds') return json(kinds);
    if (path === '/api/projects/3/credentials' && req.method === 'GET') return json(page(items));
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const renderPage = () => renderProject('/projects/3/providers');

const listed = [
  credential(),
  credential({ id: 2, kind: 'anthropic', label: 'Claude', base_url: 'https://api.anthropic.com', key_hint: null, key_source: 'env', secret_env: 'ANTHROPIC_API_KEY', is_default: false, last_test_ok: false, last_test_error: 'Invalid API key (401)', model_count: 2 }),
  credential({ id: 3, kind: 'ollama', label: 'Local', base_url: 'http://localhost:11434', key_hint: null, key_source: 'none', is_default: false, last_tested_at: null, last_test_ok: null }),
];

describe('ProvidersPage', () => {
  it('lists providers with masked keys, default and test status; a viewer gets no actions', async () => {
    serve('viewer', listed);
    renderPage();
    const table = await screen.findByRole('table', { name: 'Providers' });
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(4);
    expect(within(rows[1]).getByText('••••1234')).toBeInTheDocument();
    expect(within(rows[1]).getByText('Default')).toBeInTheDocument();
    expect(within(rows[1]).getByText('OK')).toBeInTheDocument();
    expect(within(rows[1]).getByText('OpenAI')).toBeInTheDocument();
    expect(within(rows[2]).getByText('$ANTHROPIC_API_KEY')).toBeInTheDocument();
    expect(within(rows[2]).getByText('Failed')).toBeInTheDocument();
    expect(within(rows[2]).getByText('Invalid API key (401)')).toBeInTheDocument();
    expect(within(rows[2]).getByText('2')).toBeInTheDocument();
    expect(within(rows[3]).getByText('Never tested')).toBeInTheDocument();
    expect(within(rows[3]).getByText('No key')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^(Test|Edit|Delete) / })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Add provider' })).not.toBeInTheDocument();
  });

  it('shows the empty state, and an error with a retry', async () => {
    let fail = true;
    serve('admin', [], (_req, path) =>
      path === '/api/projects/3/credentials' && fail ? json(apiError(500, 'INTERNAL', 'The database is down'), 500) : undefined,
    );
    renderPage();
    expect(await screen.findByText('The database is down')).toBeInTheDocument();
    fail = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('No providers yet')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add provider' })).toBeInTheDocument();
  });

  it('adds an Azure provider: its own fields, client checks, then the failed test-on-save result', async () => {
    const fetch = serve('admin', [], (req, path) =>
      req.method === 'POST' && path === '/api/projects/3/credentials'
        ? json(credential({ id: 7, kind: 'azure_openai', label: 'Azure', last_test_ok: false, last_test_error: 'Cannot connect to provider' }), 201)
        : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add provider' });
    const kindSelect = await within(dialog).findByLabelText('Provider');
    expect(within(kindSelect).getByRole('option', { name: "Fake provider (Assay's test double, not a real model)" })).toBeInTheDocument();
    await userEvent.selectOptions(kindSelect, 'azure_openai');
    expect(within(dialog).getByLabelText('Endpoint')).toHaveValue('');
    expect(within(dialog).getByLabelText('API version')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Deployment (optional)')).toBeInTheDocument();

    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(within(dialog).getByText('Enter the endpoint.')).toBeInTheDocument();
    expect(within(dialog).getByText('Enter the API version.')).toBeInTheDocument();
    expect(within(dialog).getByText('Enter the API key.')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'POST')).toBe(false);

    await userEvent.type(within(dialog).getByLabelText('Label'), 'Azure');
    await userEvent.type(within(dialog).getByLabelText('Endpoint'), 'https://acme.openai.azure.com');
    await userEvent.type(within(dialog).getByLabelText('API version'), '2024-10-21');
    await userEvent.type(within(dialog).getByLabelText('API key'), 'sk-secret-9876');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));

    const result = await screen.findByTestId('save-result');
    expect(result).toHaveTextContent('“Azure” saved, but the connection test failed.');
    expect(result).toHaveTextContent('Cannot connect to provider');
    const post = requestsOf(fetch).find((r) => r.method === 'POST')!;
    expect(await post.json()).toEqual({
      kind: 'azure_openai',
      label: 'Azure',
      base_url: 'https://acme.openai.azure.com',
      config: { api_version: '2024-10-21' },
      is_default: false,
      api_key: 'sk-secret-9876',
    });
    await userEvent.click(screen.getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('offers no key for Ollama, prefills its base URL, and reports a passed test', async () => {
    const fetch = serve('owner', [], (req) =>
      req.method === 'POST' ? json(credential({ id: 8, kind: 'ollama', label: 'Local', key_source: 'none', key_hint: null }), 201) : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add provider' });
    await userEvent.selectOptions(await within(dialog).findByLabelText('Provider'), 'ollama');
    expect(within(dialog).getByLabelText('Base URL')).toHaveValue('http://localhost:11434');
    expect(within(dialog).queryByLabelText(/API key/)).not.toBeInTheDocument();
    expect(within(dialog).getByText('This provider takes no API key.')).toBeInTheDocument();
    await userEvent.type(within(dialog).getByLabelText('Label'), 'Local');
    await userEvent.click(within(dialog).getByRole('checkbox', { name: /default for Ollama/ }));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(await screen.findByText('“Local” saved. Connection test passed.')).toBeInTheDocument();
    const body = await requestsOf(fetch).find((r) => r.method === 'POST')!.json();
    expect(body).toEqual({ kind: 'ollama', label: 'Local', base_url: 'http://localhost:11434', config: {}, is_default: true });
  });

  it('takes the key from an environment variable instead', async () => {
    const fetch = serve('admin', [], (req) => (req.method === 'POST' ? json(credential({ key_source: 'env' }), 201) : undefined));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add provider' });
    await userEvent.selectOptions(await within(dialog).findByLabelText('Provider'), 'openai');
    await userEvent.type(within(dialog).getByLabelText('Label'), 'OpenAI');
    await userEvent.click(within(dialog).getByRole('radio', { name: 'Environment variable' }));
    await userEvent.type(within(dialog).getByLabelText('Environment variable name'), '1BAD');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(within(dialog).getByText('Use capital letters, digits and _, not starting with a digit.')).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Environment variable name'));
    await userEvent.type(within(dialog).getByLabelText('Environment variable name'), 'ASSAY_SECRET');
    expect(within(dialog).getByText(/Assay’s own settings/)).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Environment variable name'));
    await userEvent.type(within(dialog).getByLabelText('Environment variable name'), 'OPENAI_API_KEY');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    await screen.findByTestId('save-result');
    const body = await requestsOf(fetch).find((r) => r.method === 'POST')!.json();
    expect(body).toMatchObject({ kind: 'openai', secret_env: 'OPENAI_API_KEY' });
    expect(body).not.toHaveProperty('api_key');
  });

  it('puts the server’s field errors next to the fields', async () => {
    serve('admin', [], (req) =>
      req.method === 'POST'
        ? json(apiError(422, 'VALIDATION_ERROR', 'Some fields are not valid.', { json: { label: ['Label already in use.'], config: { organization: ['Must be letters.'] } } }), 422)
        : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add provider' });
    await userEvent.selectOptions(await within(dialog).findByLabelText('Provider'), 'openai');
    await userEvent.type(within(dialog).getByLabelText('Label'), 'Dup');
    await userEvent.type(within(dialog).getByLabelText('Organization ID (optional)'), 'org !');
    await userEvent.type(within(dialog).getByLabelText('API key'), 'sk-1');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(await within(dialog).findByText('Label already in use.')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Label')).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByText('Must be letters.')).toBeInTheDocument();
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();
  });

  it('edits without showing the key: empty keeps it; settings the form does not show are kept', async () => {
    const fetch = serve('admin', [credential({ config: { organization: 'org-1', max_concurrency: 8 } })], (req) =>
      req.method === 'PATCH' ? json(credential({ label: 'Renamed', last_tested_at: '2024-01-02T00:00:00Z' })) : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit OpenAI – Production' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit provider' });
    await within(dialog).findByLabelText('Label');
    expect(within(dialog).getByLabelText('Provider')).toBeDisabled();
    expect(within(dialog).getByLabelText('API key')).toHaveValue('');
    expect(within(dialog).getByLabelText('Organization ID (optional)')).toHaveValue('org-1');
    expect(within(dialog).getByText('Leave empty to keep the current key (••••1234).')).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Label'));
    await userEvent.type(within(dialog).getByLabelText('Label'), 'Renamed');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('“Renamed” saved. Connection test passed.')).toBeInTheDocument();
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(new URL(patch.url).pathname).toBe('/api/projects/3/credentials/1');
    expect(await patch.json()).toEqual({ label: 'Renamed', base_url: 'https://api.openai.com', config: { organization: 'org-1', max_concurrency: 8 } });
  });

  it('sets rate limits as numbers, checks them first, and shows the server’s errors beside them', async () => {
    let answer422 = false;
    const fetch = serve('admin', [], (req) =>
      req.method === 'POST'
        ? answer422
          ? json(apiError(422, 'VALIDATION_ERROR', 'The settings do not fit Fake provider', { json: { config: { tpm_limit: ['Must be an integer from 1 to 1000000000 (tokens per minute per model).'] } } }), 422)
          : json(credential({ id: 9, kind: 'fake', label: 'Paced', config: { rpm_limit: 600, tpm_limit: 90000 } }), 201)
        : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add provider' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add provider' });
    await userEvent.selectOptions(await within(dialog).findByLabelText('Provider'), 'ollama');
    await userEvent.type(within(dialog).getByLabelText('Label'), 'Paced');
    const rpm = within(dialog).getByLabelText('Requests per minute (optional)');
    const tpm = within(dialog).getByLabelText('Tokens per minute (optional)');
    expect(rpm).toHaveAttribute('type', 'number');
    await userEvent.type(rpm, '0');
    await userEvent.type(tpm, '2000000000');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(within(dialog).getByText('Enter a whole number of at least 1, or leave it empty.')).toBeInTheDocument();
    expect(within(dialog).getByText('At most 1,000,000,000.')).toBeInTheDocument();
    expect(rpm).toHaveAttribute('aria-invalid', 'true');
    expect(requestsOf(fetch).some((r) => r.method === 'POST')).toBe(false);

    await userEvent.clear(rpm);
    await userEvent.type(rpm, '600');
    await userEvent.clear(tpm);
    await userEvent.type(tpm, '90000');
    answer422 = true;
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    expect(await within(dialog).findByText('Must be an integer from 1 to 1000000000 (tokens per minute per model).')).toBeInTheDocument();
    expect(tpm).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).queryByRole('alert')).not.toBeInTheDocument();

    answer422 = false;
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add and test' }));
    await screen.findByTestId('save-result');
    const posts = requestsOf(fetch).filter((r) => r.method === 'POST');
    expect(await posts[posts.length - 1].json()).toEqual({
      kind: 'ollama',
      label: 'Paced',
      base_url: 'http://localhost:11434',
      config: { rpm_limit: 600, tpm_limit: 90000 },
      is_default: false,
    });
  });

  it('edits rate limits: shown from the config, an emptied one is removed, other settings kept', async () => {
    const fetch = serve('admin', [credential({ config: { organization: 'org-1', max_concurrency: 8, rpm_limit: 60, tpm_limit: 5000 } })], (req) =>
      req.method === 'PATCH' ? json(credential({ last_tested_at: '2024-01-02T00:00:00Z' })) : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit OpenAI – Production' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit provider' });
    const rpm = await within(dialog).findByLabelText('Requests per minute (optional)');
    expect(rpm).toHaveValue(60);
    expect(within(dialog).getByLabelText('Tokens per minute (optional)')).toHaveValue(5000);
    await userEvent.clear(rpm);
    await userEvent.type(rpm, '120');
    await userEvent.clear(within(dialog).getByLabelText('Tokens per minute (optional)'));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await screen.findByTestId('save-result');
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect((await patch.json()).config).toEqual({ organization: 'org-1', max_concurrency: 8, rpm_limit: 120 });
  });

  it('shows the ceiling on calls in flight over all runs, checks it, and sends it when changed', async () => {
    const fetch = serve('admin', [credential({ concurrency_ceiling: 8 })], (req) =>
      req.method === 'PATCH' ? json(credential({ last_tested_at: '2024-01-02T00:00:00Z' })) : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit OpenAI – Production' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit provider' });
    const ceiling = await within(dialog).findByLabelText('Calls in flight, all runs (optional)');
    expect(ceiling).toHaveValue(8);
    await userEvent.clear(ceiling);
    await userEvent.type(ceiling, '0');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Enter a whole number of at least 1, or leave it empty.')).toBeInTheDocument();
    await userEvent.clear(ceiling);
    await userEvent.type(ceiling, '3');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await screen.findByTestId('save-result');
    const patches = requestsOf(fetch).filter((r) => r.method === 'PATCH');
    expect((await patches[0].json()).concurrency_ceiling).toBe(3);
  });

  it('closes an edit that changed nothing the server tests (a rename only)', async () => {
    serve('admin', [credential()], (req) => (req.method === 'PATCH' ? json(credential({ label: 'Renamed' })) : undefined));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit OpenAI – Production' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit provider' });
    await userEvent.clear(await within(dialog).findByLabelText('Label'));
    await userEvent.type(within(dialog).getByLabelText('Label'), 'Renamed');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('tests a provider on demand and shows the result inline; sets a default', async () => {
    const fetch = serve('admin', listed, (req, path) => {
      if (req.method === 'POST' && path === '/api/projects/3/credentials/2/test')
        return json({ ok: false, error: 'Invalid API key (401)', latency_ms: 81, tested_at: ts });
      if (req.method === 'POST' && path === '/api/projects/3/credentials/1/test')
        return json({ ok: true, error: null, latency_ms: 42.4, tested_at: ts });
      if (req.method === 'PATCH') return json(credential({ id: 2, is_default: true }));
      return undefined;
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Test OpenAI – Production' }));
    expect(await screen.findByTestId('test-result-1')).toHaveTextContent('Connection OK (42 ms)');
    await userEvent.click(screen.getByRole('button', { name: 'Test Claude' }));
    expect(await screen.findByTestId('test-result-2')).toHaveTextContent('Test failed: Invalid API key (401)');

    expect(screen.queryByRole('button', { name: 'Make OpenAI – Production the default' })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Make Claude the default' }));
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(new URL(patch.url).pathname).toBe('/api/projects/3/credentials/2');
    expect(await patch.json()).toEqual({ is_default: true });
  });

  it('confirms a delete, and shows the server’s refusal when models use the provider', async () => {
    const fetch = serve('admin', listed, (req) =>
      req.method === 'DELETE'
        ? json(apiError(409, 'CREDENTIAL_IN_USE', 'Claude is used by 2 models (Haiku, Sonnet): archive or move them first.'), 409)
        : undefined,
    );
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Delete Claude' }));
    let dialog = screen.getByRole('dialog', { name: 'Delete provider' });
    expect(dialog).toHaveTextContent('2 models use it');
    await userEvent.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => r.method === 'DELETE')).toBe(false);

    await userEvent.click(screen.getByRole('button', { name: 'Delete Claude' }));
    dialog = screen.getByRole('dialog', { name: 'Delete provider' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete provider' }));
    expect(await within(dialog).findByText('Claude is used by 2 models (Haiku, Sonnet): archive or move them first.')).toBeInTheDocument();
    expect(within(dialog).queryByRole('button', { name: 'Delete provider' })).not.toBeInTheDocument();
    const del = requestsOf(fetch).find((r) => r.method === 'DELETE')!;
    expect(new URL(del.url).pathname).toBe('/api/projects/3/credentials/2');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });
  it('sends Set default based on the row_version it listed; a stale one overwrites nothing and offers Reload or Keep mine', async () => {
    const listing = listed.map((c) => (c.id === 1 ? c : { ...c, row_version: 4 }));
    const fetch = serve('admin', [], (req, path) => {
      if (path === '/api/projects/3/credentials' && req.method === 'GET') return json(page(listing));
      if (req.method !== 'PATCH') return undefined;
      if (req.headers.get('If-Match') === '"4"') {
        return json({ ...apiError(412, 'STALE_WRITE', 'This was changed since you read it'), current: { ...listed[1], label: 'Claude (renamed)', row_version: 5 }, current_version: 5 }, 412);
      }
      return json({ ...listed[1], is_default: true, row_version: 6 });
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Make Claude the default' }));
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    expect(screen.getByText('Default: Claude')).toBeInTheDocument();
    const patches = () => requestsOf(fetch).filter((r) => r.method === 'PATCH');
    expect(patches()).toHaveLength(1);
    expect(patches()[0].headers.get('If-Match')).toBe('"4"');

    // Keep mine sends it again, now based on the version the refusal reported
    await userEvent.click(screen.getByRole('button', { name: 'Keep mine' }));
    await waitFor(() => expect(patches()).toHaveLength(2));
    expect(patches()[1].headers.get('If-Match')).toBe('"5"');
    await waitFor(() => expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument());

    // Reload after another refusal: the list is read again, nothing more is sent
    await userEvent.click(await screen.findByRole('button', { name: 'Make Local the default' }));
    expect(await screen.findByText(/This was changed elsewhere/)).toBeInTheDocument();
    const reads = requestsOf(fetch).filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/api/projects/3/credentials').length;
    await userEvent.click(screen.getByRole('button', { name: 'Reload' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/api/projects/3/credentials').length).toBeGreaterThan(reads));
    expect(screen.queryByText(/This was changed elsewhere/)).not.toBeInTheDocument();
    expect(patches()).toHaveLength(3);
  });
});
