import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, requestsOf } from '@/test/utils';
import { renderProject } from '@/test/project';
import { apiError, credential, kinds, modelConfig, page, project, ts } from '@/test/providerFixtures';

type Extra = (req: Request, path: string, url: URL) => Response | Promise<Response> | undefined;

const credentials = [credential(), credential({ id: 2, kind: 'anthropic', label: 'Claude', is_default: true })];

function serve(role: string, models: unknown[], extra: Extra = () => undefined) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    const hit = await extra(req, path, url);
    if (hit) return hit;
    if (path === '/api/projects/3') return json(project(role));
    if (path === '/api/provider-kinds') return json(kinds);
    if (path === '/api/projects/3/credentials') return json(page(credentials));
    if (path === '/api/projects/3/models' && req.method === 'GET') {
      const archived = url.searchParams.get('include_archived') === 'true';
      return json(page(models.filter((m) => archived || !(m as { archived_at: string | null }).archived_at)));
    }
    return json(apiError(404, 'NOT_FOUND', 'Not found'), 404);
  });
}

const renderPage = () => renderProject('/projects/3/models');

const listed = [
  modelConfig(),
  modelConfig({ id: 6, name: 'Haiku', credential_id: 2, credential_label: 'Claude', provider: 'anthropic', model: 'claude-3-5-haiku', input_price_per_mtok_micros: null, output_price_per_mtok_micros: 4_000_000, priced: false, context_window: null }),
  modelConfig({ id: 7, name: 'Old', model: 'gpt-3.5-turbo', archived_at: ts, input_price_per_mtok_micros: 2_500_000, output_price_per_mtok_micros: 10_000_000 }),
];

describe('ModelsPage', () => {
  it('lists models with formatted prices, flags unpriced ones, and shows archived on demand', async () => {
    const fetch = serve('viewer', listed);
    renderPage();
    const table = await screen.findByRole('table', { name: 'Models' });
    let rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(within(rows[1]).getByText('$0.15')).toBeInTheDocument();
    expect(within(rows[1]).getByText('$0.60')).toBeInTheDocument();
    expect(within(rows[1]).getByText('128,000')).toBeInTheDocument();
    expect(within(rows[1]).getByText('Active')).toBeInTheDocument();
    expect(within(rows[1]).queryByText('Unpriced')).not.toBeInTheDocument();
    expect(within(rows[2]).getByText('Unpriced')).toBeInTheDocument();
    expect(within(rows[2]).getByText('$4.00')).toBeInTheDocument();
    expect(within(rows[2]).getByText('Anthropic')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^(Edit|Archive|Delete) / })).not.toBeInTheDocument();

    await userEvent.click(screen.getByRole('checkbox', { name: 'Show archived' }));
    expect(await within(table).findByText('Old')).toBeInTheDocument();
    rows = within(table).getAllByRole('row');
    expect(within(rows[3]).getByText('Archived')).toBeInTheDocument();
    expect(within(rows[3]).getByText('$2.50')).toBeInTheDocument();
    expect(within(rows[3]).getByText('$10.00')).toBeInTheDocument();
    expect(requestsOf(fetch).some((r) => new URL(r.url).searchParams.get('include_archived') === 'true')).toBe(true);
  });

  it('shows the empty state, and an error with a retry', async () => {
    let fail = true;
    serve('editor', [], (_req, path) =>
      path === '/api/projects/3/models' && fail ? json(apiError(503, 'UNAVAILABLE', 'Try again shortly'), 503) : undefined,
    );
    renderPage();
    expect(await screen.findByText('Try again shortly')).toBeInTheDocument();
    fail = false;
    await userEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('No models yet')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'provider' })).toHaveAttribute('href', '/projects/3/providers');
  });

  it('adds a model: prices in dollars become micro-dollars; the server’s 422 lands next to the fields', async () => {
    let attempts = 0;
    const fetch = serve('editor', [], (req, path) => {
      if (req.method !== 'POST' || path !== '/api/projects/3/models') return undefined;
      attempts += 1;
      if (attempts === 1)
        return json(apiError(422, 'VALIDATION_ERROR', 'Some parameters are not valid for this provider', { json: { params: { temperature: ['Must be between 0 and 1 for Anthropic models.'] } } }), 422);
      return json(modelConfig({ id: 9, name: 'Sonnet' }), 201);
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add model' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add model' });
    await within(dialog).findByLabelText('Name');

    await userEvent.click(within(dialog).getByRole('button', { name: 'Add model' }));
    expect(within(dialog).getByText('Choose a provider.')).toBeInTheDocument();
    expect(within(dialog).getByText('Enter the provider’s model id.')).toBeInTheDocument();

    await userEvent.type(within(dialog).getByLabelText('Name'), 'Sonnet');
    await userEvent.selectOptions(within(dialog).getByLabelText('Provider'), '2');
    await userEvent.type(within(dialog).getByLabelText('Model id'), 'claude-sonnet-4');
    await userEvent.type(within(dialog).getByLabelText('Input price ($ per 1M tokens)'), 'abc');
    expect(within(dialog).getByText('Enter a price in dollars, such as 0.15.')).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Input price ($ per 1M tokens)'));
    await userEvent.type(within(dialog).getByLabelText('Input price ($ per 1M tokens)'), '0.1');
    await userEvent.type(within(dialog).getByLabelText('Output price ($ per 1M tokens)'), '2.5');
    await userEvent.type(within(dialog).getByLabelText('Context window (optional)'), '200,000');
    // Anthropic rules as hints: seed is not taken, temperature is 0-1.
    expect(within(dialog).getByText('From 0 to 1 for Anthropic.')).toBeInTheDocument();
    await userEvent.type(within(dialog).getByLabelText('Temperature'), '1.5');
    expect(within(dialog).getByText(/Must be between 0 and 1\. The server decides/)).toBeInTheDocument();
    await userEvent.type(within(dialog).getByLabelText('Stop sequences'), 'END{Enter}###');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add model' }));

    expect(await within(dialog).findByText('Must be between 0 and 1 for Anthropic models.')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Temperature')).toHaveAttribute('aria-invalid', 'true');
    expect(within(dialog).getByLabelText('Temperature')).toHaveFocus();
    const first = await requestsOf(fetch).find((r) => r.method === 'POST')!.json();
    expect(first).toEqual({
      name: 'Sonnet',
      credential_id: 2,
      model: 'claude-sonnet-4',
      input_price_per_mtok_micros: 100_000,
      output_price_per_mtok_micros: 2_500_000,
      context_window: 200_000,
      params: { temperature: 1.5, stop: ['END', '###'] },
    });

    await userEvent.clear(within(dialog).getByLabelText('Temperature'));
    await userEvent.type(within(dialog).getByLabelText('Temperature'), '0.7');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add model' }));
    await screen.findByRole('table', { name: 'Models' }).catch(() => undefined);
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(attempts).toBe(2);
  });

  it('leaves prices empty as null and warns that the model will be unpriced', async () => {
    const fetch = serve('editor', [], (req) => (req.method === 'POST' ? json(modelConfig({ priced: false }), 201) : undefined));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add model' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add model' });
    await userEvent.type(await within(dialog).findByLabelText('Name'), 'Free?');
    await userEvent.selectOptions(within(dialog).getByLabelText('Provider'), '1');
    await userEvent.type(within(dialog).getByLabelText('Model id'), 'gpt-4o-mini');
    expect(within(dialog).getByText(/flagged Unpriced/)).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Add model' }));
    await screen.findByText('No models yet');
    const body = await requestsOf(fetch).find((r) => r.method === 'POST')!.json();
    expect(body).toMatchObject({ input_price_per_mtok_micros: null, output_price_per_mtok_micros: null, context_window: null, params: {} });
  });

  it('fills the model id from the provider’s discovered models, and shows a refusal', async () => {
    serve('editor', [], (_req, path) => {
      if (path === '/api/projects/3/credentials/1/discover') return json({ items: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }] });
      if (path === '/api/projects/3/credentials/2/discover')
        return json(apiError(409, 'CONFLICT', 'Anthropic offers no model list to discover: type the model id'), 409);
      return undefined;
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Add model' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add model' });
    const discover = await within(dialog).findByRole('button', { name: 'Discover' });
    expect(discover).toBeDisabled();
    await userEvent.selectOptions(within(dialog).getByLabelText('Provider'), '1');
    await userEvent.click(discover);
    const picker = await within(dialog).findByLabelText('Discovered models (2)');
    await userEvent.selectOptions(picker, 'gpt-4o-mini');
    expect(within(dialog).getByLabelText('Model id')).toHaveValue('gpt-4o-mini');

    await userEvent.selectOptions(within(dialog).getByLabelText('Provider'), '2');
    expect(within(dialog).queryByLabelText(/Discovered models/)).not.toBeInTheDocument();
    await userEvent.click(discover);
    expect(await within(dialog).findByText('Anthropic offers no model list to discover: type the model id')).toBeInTheDocument();
  });

  it('edits a model with its saved values', async () => {
    const saved = modelConfig({ params: { temperature: 0.2, stop: ['A'] }, input_price_per_mtok_micros: 75_000 });
    const fetch = serve('editor', [saved], (req) => (req.method === 'PATCH' ? json(saved) : undefined));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Edit Mini' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit model' });
    expect(await within(dialog).findByLabelText('Name')).toHaveValue('Mini');
    expect(within(dialog).getByLabelText('Input price ($ per 1M tokens)')).toHaveValue('0.075');
    expect(within(dialog).getByLabelText('Output price ($ per 1M tokens)')).toHaveValue('0.6');
    expect(within(dialog).getByLabelText('Temperature')).toHaveValue('0.2');
    expect(within(dialog).getByLabelText('Stop sequences')).toHaveValue('A');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Save model' }));
    const patch = requestsOf(fetch).find((r) => r.method === 'PATCH')!;
    expect(new URL(patch.url).pathname).toBe('/api/projects/3/models/5');
    expect(await patch.json()).toMatchObject({ input_price_per_mtok_micros: 75_000, output_price_per_mtok_micros: 600_000, params: { temperature: 0.2, stop: ['A'] } });
  });

  it('archives and restores', async () => {
    let archived = false;
    const fetch = serve('editor', [], (req, path, url) => {
      if (req.method === 'POST' && path === '/api/projects/3/models/5/archive') {
        archived = true;
        return json(modelConfig({ archived_at: ts }));
      }
      if (req.method === 'POST' && path === '/api/projects/3/models/5/restore') {
        archived = false;
        return json(modelConfig());
      }
      if (req.method === 'GET' && path === '/api/projects/3/models') {
        const include = url.searchParams.get('include_archived') === 'true';
        return json(page(archived && !include ? [] : [modelConfig(archived ? { archived_at: ts } : {})]));
      }
      return undefined;
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Archive Mini' }));
    expect(await screen.findByText('No models yet')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('checkbox', { name: 'Show archived' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Restore Mini' }));
    expect(await screen.findByRole('button', { name: 'Archive Mini' })).toBeInTheDocument();
    const posts = requestsOf(fetch).filter((r) => r.method === 'POST').map((r) => new URL(r.url).pathname);
    expect(posts).toEqual(['/api/projects/3/models/5/archive', '/api/projects/3/models/5/restore']);
  });

  it('a refused delete shows the server’s message and offers to archive instead', async () => {
    const fetch = serve('editor', [modelConfig()], (req, path) => {
      if (req.method === 'DELETE')
        return json(apiError(409, 'MODEL_IN_USE', 'Mini is used by 3 runs: archive it instead.'), 409);
      if (req.method === 'POST' && path.endsWith('/archive')) return json(modelConfig({ archived_at: ts }));
      return undefined;
    });
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Delete Mini' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete model' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete model' }));
    expect(await within(dialog).findByText('Mini is used by 3 runs: archive it instead.')).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole('button', { name: 'Archive instead' }));
    await screen.findByRole('table', { name: 'Models' });
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    const paths = requestsOf(fetch).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${new URL(r.url).pathname}`);
    expect(paths).toEqual(['DELETE /api/projects/3/models/5', 'POST /api/projects/3/models/5/archive']);
  });
});
