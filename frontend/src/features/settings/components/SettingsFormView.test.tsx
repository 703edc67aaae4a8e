import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import type { ProjectSettings } from '../settingsForm';
import { SettingsFormView } from './SettingsFormView';

const saved: ProjectSettings = {
  row_version: 1,
  name: 'Alpha',
  description: null,
  budget_micros: 10_000_000,
  alert_threshold: 0.8,
  default_concurrency: null,
  default_timeout_s: null,
  default_max_retries: null,
  code_execution: false,
  arena_allowance_micros: null,
  spent_micros: 2_500_000,
  reserved_micros: 0,
  can_edit: true,
};

function serve(reply: (body: Record<string, unknown>) => Response) {
  return mockFetch(async (req) => {
    if (req.method === 'PATCH') return reply((await req.clone().json()) as Record<string, unknown>);
    return json(saved);
  });
}

const patches = async (fetch: ReturnType<typeof mockFetch>) =>
  Promise.all(requestsOf(fetch).filter((r) => r.method === 'PATCH').map((r) => r.clone().json()));

async function replace(label: RegExp, value: string) {
  const input = screen.getByLabelText(label);
  await userEvent.clear(input);
  if (value) await userEvent.type(input, value);
}

describe('project settings form', () => {
  it('shows spend against the cap and saves only what changed', async () => {
    const fetch = serve((body) => json({ ...saved, ...body }));
    renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    expect(screen.getByText('Spent so far: $2.50 of $10.00')).toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: 'Share of the project budget spent' })).toHaveAttribute('aria-valuenow', '25');
    await replace(/Project budget in dollars/, '0.5');
    await replace(/Alert at/, '50');
    await replace(/Max retries/, '0');
    await userEvent.click(screen.getByLabelText('Allow the code execution scorer'));
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Settings saved.')).toBeInTheDocument();
    expect(await patches(fetch)).toEqual([{ budget_micros: 500_000, alert_threshold: 0.5, default_max_retries: 0, code_execution: true }]);
  });

  it('refuses bad values field by field and sends nothing', async () => {
    const fetch = serve(() => json(saved));
    renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    await replace(/Project budget in dollars/, '-5');
    await replace(/Alert at/, '150');
    await replace(/Max retries/, '11');
    await replace(/Concurrency/, '0');
    await replace(/Timeout in seconds/, '4000');
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(screen.getByText('A budget cannot be negative.')).toBeInTheDocument();
    expect(screen.getByText('A percentage more than 0 and at most 100.')).toBeInTheDocument();
    expect(screen.getByText(/A whole number from 0 to 10/)).toBeInTheDocument();
    expect(screen.getByText(/A whole number from 1 to 1000/)).toBeInTheDocument();
    expect(screen.getByText(/Seconds, a whole number from 1 to 3600/)).toBeInTheDocument();
    expect(await patches(fetch)).toEqual([]);
  });

  it('says so when nothing changed, and shows the server’s field errors beside their fields', async () => {
    const fetch = serve(() =>
      json({ code: 'VALIDATION_ERROR', status: 422, message: 'Invalid input', errors: { json: { name: ['Only letters, digits, spaces, hyphens and underscores'] } } }, 422),
    );
    renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(screen.getByText('Nothing changed.')).toBeInTheDocument();
    expect(await patches(fetch)).toEqual([]);
    await replace(/^Name/, 'Alpha!');
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Only letters, digits, spaces, hyphens and underscores')).toBeInTheDocument();
    expect(screen.getByText('Some settings are not valid.')).toBeInTheDocument();
  });

  it('shows the arena allowance as dollars and saves it in micro-dollars, or clears it', async () => {
    const fetch = serve((body) => json({ ...saved, ...body }));
    const { unmount } = renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    const field = screen.getByLabelText(/Arena allowance in dollars/);
    expect(field).toHaveValue('');
    expect(screen.getByTestId('arena-allowance-summary')).toHaveTextContent('viewers and reviewers cannot run paid judges');
    await replace(/Arena allowance in dollars/, '$12.50');
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Settings saved.')).toBeInTheDocument();
    expect(await patches(fetch)).toEqual([{ arena_allowance_micros: 12_500_000 }]);
    unmount();

    const set = { ...saved, arena_allowance_micros: 2_500_000 };
    const again = serve((body) => json({ ...set, ...body }));
    renderWithProviders(<SettingsFormView projectId={3} settings={set} />);
    expect(screen.getByLabelText(/Arena allowance in dollars/)).toHaveValue('2.5');
    expect(screen.getByTestId('arena-allowance-summary')).toHaveTextContent('may spend up to $2.50 in all');
    await replace(/Arena allowance in dollars/, '');
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Settings saved.')).toBeInTheDocument();
    expect(await patches(again)).toEqual([{ arena_allowance_micros: null }]);
  });

  it.each([
    ['-1', 'An allowance cannot be negative.'],
    ['ten', 'Enter an amount in dollars, such as 0.15.'],
    ['0.0000001', 'Use at most 6 decimals (one micro-dollar).'],
    ['1000000000.01', 'At most $1,000,000,000.'],
  ])('refuses an arena allowance of %s with its error and sends nothing', async (value, message) => {
    const fetch = serve(() => json(saved));
    renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    await replace(/Arena allowance in dollars/, value);
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    const field = screen.getByLabelText(/Arena allowance in dollars/);
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(field).toHaveAccessibleDescription(expect.stringContaining(message));
    expect(field).toHaveFocus();
    expect(await patches(fetch)).toEqual([]);
  });

  it('shows the server’s error on the arena allowance beside it', async () => {
    serve(() => json({ code: 'VALIDATION_ERROR', status: 422, message: 'Invalid input', errors: { json: { arena_allowance_micros: ['Must be at most 1000000000000000'] } } }, 422));
    renderWithProviders(<SettingsFormView projectId={3} settings={saved} />);
    await replace(/Arena allowance in dollars/, '5');
    await userEvent.click(screen.getByRole('button', { name: 'Save settings' }));
    expect(await screen.findByText('Must be at most 1000000000000000')).toBeInTheDocument();
    expect(screen.getByLabelText(/Arena allowance in dollars/)).toHaveAttribute('aria-invalid', 'true');
  });

  it('is read-only below admin', () => {
    serve(() => json(saved));
    renderWithProviders(<SettingsFormView projectId={3} settings={{ ...saved, can_edit: false }} />);
    expect(screen.getByText(/Only admins and owners change settings/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Save settings' })).not.toBeInTheDocument();
    expect(screen.getByLabelText('Allow the code execution scorer')).toBeDisabled();
    expect(screen.getByLabelText(/Project budget in dollars/)).toHaveAttribute('readonly');
    expect(screen.getByLabelText(/Arena allowance in dollars/)).toHaveAttribute('readonly');
  });
});
