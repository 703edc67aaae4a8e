import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { modelConfig, page } from '@/test/providerFixtures';
import { NewRunDialog } from './NewRunDialog';
import { formatRange } from './RunEstimate';

const dataset = { id: 4, name: 'Support FAQ', version: 2, case_count: 12, created_at: '2024-01-01T00:00:00Z' };
const models = [modelConfig({ id: 5, name: 'Mini' }), modelConfig({ id: 6, name: 'Local', input_price_per_mtok_micros: null, priced: false })];

function estimate(body: { model_ids: number[]; repeats: number }) {
  const perModel = body.model_ids.map((id) => ({
    model_id: id,
    name: id === 5 ? 'Mini' : 'Local',
    calls: 12 * body.repeats,
    input_tokens: 1000,
    output_tokens_low: 100,
    output_tokens_high: 4000,
    low_micros: id === 5 ? 10_000 * body.repeats : null,
    high_micros: id === 5 ? 30_000 * body.repeats : null,
    priced: id === 5,
  }));
  const unpriced = body.model_ids.filter((id) => id !== 5);
  return {
    dataset_version_id: 8,
    cases: 12,
    repeats: body.repeats,
    calls: 12 * body.repeats * body.model_ids.length,
    low_micros: body.model_ids.includes(5) ? 10_000 * body.repeats : 0,
    high_micros: body.model_ids.includes(5) ? 30_000 * body.repeats : 0,
    complete: unpriced.length === 0,
    per_model: perModel,
    unpriced_models: unpriced,
    assumptions: { low_output_share: 0.1, default_max_tokens: 4000, tokens_per_message: 4 },
  };
}

describe('NewRunDialog', () => {
  it('shows the cost range before starting, flags unpriced models, and sends repeats', async () => {
    const fetch = mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3/datasets') return json(page([dataset]));
      if (path === '/api/projects/3/models') return json(page(models));
      if (path === '/api/projects/3/runs/estimate') return json(estimate(await req.json()));
      if (path === '/api/projects/3/runs' && req.method === 'POST') return json({ id: 11 }, 202);
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderWithProviders(<NewRunDialog projectId={3} open onClose={() => undefined} />);
    const dialog = await screen.findByRole('dialog', { name: 'New run' });
    expect(await within(dialog).findByText('· unpriced')).toBeInTheDocument();
    expect(within(dialog).queryByTestId('run-estimate')).not.toBeInTheDocument();

    await userEvent.selectOptions(within(dialog).getByLabelText('Dataset'), '4');
    await userEvent.click(within(dialog).getByLabelText(/^Mini/));
    const box = await within(dialog).findByTestId('run-estimate');
    expect(box).toHaveTextContent('$0.01 – $0.03');
    expect(box).toHaveTextContent('12 calls (12 cases × 1 model)');

    await userEvent.click(within(dialog).getByLabelText(/^Local/));
    await userEvent.clear(within(dialog).getByLabelText('Repeats'));
    await userEvent.type(within(dialog).getByLabelText('Repeats'), '2');
    expect(await within(dialog).findByText(/\$0\.02 – \$0\.06/)).toBeInTheDocument();
    expect(within(dialog).getByTestId('run-estimate')).toHaveTextContent('+ unpriced');
    expect(within(dialog).getByText(/Unpriced, so not in the total: Local/)).toBeInTheDocument();

    await userEvent.click(within(dialog).getByRole('button', { name: 'Start run' }));
    expect(await screen.findByText('Run page')).toBeInTheDocument();
    const post = requestsOf(fetch).find((r) => r.method === 'POST' && new URL(r.url).pathname === '/api/projects/3/runs')!;
    expect(await post.json()).toEqual({ dataset_id: 4, model_ids: [5, 6], name: null, repeats: 2 });
  });

  it('says so when there is no estimate, and still lets the run start', async () => {
    mockFetch(async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/api/projects/3/datasets') return json(page([dataset]));
      if (path === '/api/projects/3/models') return json(page(models));
      if (path === '/api/projects/3/runs/estimate')
        return json({ code: 'VALIDATION_ERROR', status: 422, message: 'The dataset has no cases', errors: {} }, 422);
      return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
    });
    renderWithProviders(<NewRunDialog projectId={3} open onClose={() => undefined} />);
    const dialog = await screen.findByRole('dialog', { name: 'New run' });
    await userEvent.selectOptions(await within(dialog).findByLabelText('Dataset'), '4');
    await userEvent.click(within(dialog).getByLabelText(/^Mini/));
    expect(await within(dialog).findByText('No cost estimate: The dataset has no cases')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Start run' })).toBeEnabled();
  });

  it('formats a range', () => {
    expect(formatRange(10_000, 30_000)).toBe('$0.01 – $0.03');
    expect(formatRange(2_500_000, 2_500_000)).toBe('$2.50');
  });
});
