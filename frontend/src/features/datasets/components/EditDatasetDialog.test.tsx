import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import { apiError, dataset } from '../testFixtures';
import { EditDatasetDialog } from './EditDatasetDialog';

describe('EditDatasetDialog', () => {
  it('sends If-Match with the row_version it loaded', async () => {
    const user = userEvent.setup();
    const fetch = mockFetch(async (req) => (req.method === 'PATCH' ? json(dataset({ row_version: 6 })) : json({ items: [], total: 0, page: 1, page_size: 50 })));
    renderWithProviders(<EditDatasetDialog projectId={3} dataset={dataset({ row_version: 5 })} open onClose={() => {}} />);
    const dialog = screen.getByRole('dialog', { name: 'Edit dataset details' });
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(requestsOf(fetch).filter((r) => r.method === 'PATCH')).toHaveLength(1));
    expect(requestsOf(fetch).find((r) => r.method === 'PATCH')!.headers.get('If-Match')).toBe('"5"');
  });

  it('on 412 does not close, shows the notice with the edit, and Reload keeps the typed values', async () => {
    const user = userEvent.setup();
    mockFetch(async (req) =>
      req.method === 'PATCH'
        ? json({ ...apiError(412, 'STALE_WRITE', 'Changed elsewhere'), current: dataset({ name: 'Theirs', row_version: 2 }), current_version: 2 }, 412)
        : json({ items: [], total: 0, page: 1, page_size: 50 }),
    );
    let closed = 0;
    renderWithProviders(<EditDatasetDialog projectId={3} dataset={dataset()} open onClose={() => closed++} />);
    const dialog = screen.getByRole('dialog', { name: 'Edit dataset details' });
    await user.clear(within(dialog).getByLabelText('Name'));
    await user.type(within(dialog).getByLabelText('Name'), 'Mine');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    const notice = (await within(dialog).findByText(/This was changed elsewhere/)).closest('[role="alert"]')!;
    expect(notice).toHaveTextContent('name "Mine"');
    expect(closed).toBe(0);
    await user.click(within(dialog).getByRole('button', { name: 'Reload' }));
    expect(within(dialog).getByLabelText('Name')).toHaveValue('Mine');
  });
});
