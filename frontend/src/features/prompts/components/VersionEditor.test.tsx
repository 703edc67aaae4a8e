import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderWithProviders, requestsOf } from '@/test/utils';
import type { PromptVersion } from '../api';
import { VersionEditor } from './VersionEditor';

const parent: PromptVersion = {
  id: 41,
  prompt_id: 7,
  number: 2,
  template: 'Answer {{question}} briefly.',
  system: null,
  few_shots: [{ input: '2+2?', output: '4' }],
  tools: [],
  variables: ['question'],
  note: 'Shorter answers',
  parent_id: 40,
  created_by: 1,
  author: 'Ada',
  created_at: '2026-11-25T10:00:00Z',
};

const URL_ = '/api/projects/3/prompts/7/versions';

function setup(handler: (req: Request) => Response | Promise<Response>) {
  const fetch = mockFetch(handler);
  const onSaved = vi.fn();
  renderWithProviders(<VersionEditor projectId={3} promptId={7} parent={parent} onSaved={onSaved} onCancel={() => undefined} />);
  return { fetch, onSaved };
}

const typeInto = async (label: string | RegExp, text: string) => {
  const box = screen.getByLabelText(label);
  await userEvent.clear(box);
  // userEvent reads { and [ as key descriptors: doubled, they are typed literally.
  await userEvent.type(box, text.replace(/[{[]/g, (c) => c + c));
};

describe('VersionEditor', () => {
  it('lists the variables of the template and system text as they are typed', async () => {
    setup(() => json({}));
    const variables = () => within(screen.getByRole('list', { name: 'Variables' })).getAllByRole('listitem').map((li) => li.textContent);
    expect(variables()).toEqual(['question']);
    await typeInto('Template', 'Tell {{ audience }} about {{topic}} and {{topic}}, not {{1x}}');
    expect(variables()).toEqual(['audience', 'topic']);
    await typeInto('System text (optional)', 'You write for {{tone}}');
    expect(variables()).toEqual(['audience', 'topic', 'tone']);
  });

  it('shows bad tools JSON and empty examples before the review, and sends nothing', async () => {
    const { fetch } = setup(() => json({}));
    await typeInto('Tools (JSON, optional)', '[{"name": "bad name"}]');
    await userEvent.click(screen.getByRole('button', { name: 'Add example' }));
    await userEvent.click(screen.getByRole('button', { name: 'Review changes' }));
    expect(screen.getByLabelText('Tools (JSON, optional)')).toHaveAccessibleDescription(/name must be 1-64 letters/);
    expect(screen.getByText('Every example needs an input and an output.')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Remove example 2' }));
    await typeInto('Tools (JSON, optional)', '[{"name": "lookup"}]');
    await userEvent.click(screen.getByRole('button', { name: 'Review changes' }));
    expect(await screen.findByRole('heading', { name: 'Review changes against v2' })).toBeInTheDocument();
    expect(fetch).not.toHaveBeenCalled();
  });

  it('previews the diff against the parent, requires a changelog, and saves with the parent', async () => {
    const { fetch, onSaved } = setup(async (req) => {
      const body = await req.clone().json();
      if (body.note.length < 15) return json({ code: 'VALIDATION_ERROR', status: 422, message: 'Invalid input', errors: { json: { note: ['Too short per server.'] } } }, 422);
      return json({ ...parent, id: 42, number: 3, parent_id: 41, ...body }, 201);
    });
    await typeInto('Template', 'Answer {{question}} in one line.');
    await userEvent.click(screen.getByRole('button', { name: 'Remove example 1' }));
    await userEvent.click(screen.getByRole('button', { name: 'Review changes' }));

    const diff = screen.getByTestId('version-diff');
    const template = within(diff).getByRole('region', { name: 'Template changes' });
    const text = (tag: string) => [...template.querySelectorAll(tag)].map((e) => e.textContent).join('|');
    expect(text('del')).toBe('[removed: briefly]');
    expect(text('ins')).toBe('[added: in one line]');
    expect(within(diff).getByRole('region', { name: 'Few-shot examples changes' }).querySelector('del')).toHaveTextContent('2+2?');
    expect(within(diff).queryByRole('region', { name: 'Tools changes' })).not.toBeInTheDocument();
    expect(diff).toHaveTextContent('Unchanged: system text, tools.');
    await userEvent.click(screen.getByRole('radio', { name: 'Side by side' }));
    expect(within(diff).getAllByTestId('diff-split')).toHaveLength(2);

    // Too short for the client: nothing is sent.
    await userEvent.type(screen.getByLabelText('Changelog'), 'One line');
    await userEvent.click(screen.getByRole('button', { name: 'Save as new version' }));
    expect(screen.getByLabelText('Changelog')).toHaveAccessibleDescription(/at least 10 characters \(8 so far\)/);
    expect(fetch).not.toHaveBeenCalled();

    // Long enough here, refused by the (stricter, mocked) server: its 422 is shown at the field.
    await userEvent.type(screen.getByLabelText('Changelog'), ' now');
    await userEvent.click(screen.getByRole('button', { name: 'Save as new version' }));
    expect(await screen.findByText('Too short per server.')).toBeInTheDocument();
    expect(onSaved).not.toHaveBeenCalled();

    await userEvent.type(screen.getByLabelText('Changelog'), ', shorter');
    await userEvent.click(screen.getByRole('button', { name: 'Save as new version' }));
    await waitFor(() => expect(onSaved).toHaveBeenCalledWith(expect.objectContaining({ id: 42, number: 3 })));
    const sent = requestsOf(fetch).filter((r) => new URL(r.url).pathname === URL_);
    expect(sent).toHaveLength(2);
    expect(await sent[1].json()).toEqual({
      template: 'Answer {{question}} in one line.',
      system: null,
      few_shots: [],
      tools: [],
      note: 'One line now, shorter',
      parent_id: 41,
    });
  });
});
