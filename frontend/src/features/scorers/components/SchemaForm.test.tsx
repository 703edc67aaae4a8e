import { useState } from 'react';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../schema';
import { SchemaForm } from './SchemaForm';

// Shaped like what GET /api/scorer-kinds serves (similarity, safety, json_schema, key_points).
const schema: JsonSchema = {
  type: 'object',
  required: ['value'],
  properties: {
    value: { type: 'string', description: 'The text to compare with' },
    method: { type: 'string', enum: ['ratio', 'token_set_ratio'], default: 'ratio' },
    threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Needed to pass' },
    normalize: { type: 'boolean' },
    points: { type: 'array', items: { type: 'string' }, minItems: 1 },
    checks: { type: 'array', items: { type: 'string', enum: ['pii', 'jailbreak'] } },
    schema: { type: ['object', 'boolean'], description: 'A JSON Schema' },
  },
};

function Harness({ errors = {}, onValue }: { errors?: Record<string, string>; onValue: (p: Record<string, unknown>) => void }) {
  const [value, setValue] = useState<Record<string, unknown>>({ method: 'ratio' });
  return (
    <SchemaForm
      schema={schema}
      value={value}
      errors={errors}
      onChange={(next) => {
        setValue(next);
        onValue(next);
      }}
    />
  );
}

describe('SchemaForm', () => {
  it('renders a labelled control per property and builds params of the right types', async () => {
    const user = userEvent.setup();
    let params: Record<string, unknown> = {};
    render(<Harness onValue={(p) => (params = p)} />);

    await user.type(screen.getByLabelText('Value'), 'Paris');
    expect(screen.getByLabelText('Value')).toHaveAccessibleDescription('The text to compare with');
    await user.selectOptions(screen.getByLabelText('Method (optional)'), 'token_set_ratio');
    await user.type(screen.getByLabelText('Threshold (optional)'), '0.75');
    await user.click(screen.getByLabelText('Normalize'));
    await user.type(screen.getByLabelText('Points (optional)'), 'capital{enter}France{enter}');
    await user.click(within(screen.getByRole('group', { name: /^Checks/ })).getByLabelText('pii'));
    await user.click(screen.getByLabelText('Schema (optional)'));
    await user.paste('{"type": "object"}');

    expect(params).toEqual({
      value: 'Paris',
      method: 'token_set_ratio',
      threshold: 0.75,
      normalize: true,
      points: ['capital', 'France'],
      checks: ['pii'],
      schema: { type: 'object' },
    });
  });

  it('clears optional fields back to absent, and says when JSON is not valid yet', async () => {
    const user = userEvent.setup();
    let params: Record<string, unknown> = {};
    render(<Harness onValue={(p) => (params = p)} />);
    const threshold = screen.getByLabelText('Threshold (optional)');
    await user.type(threshold, '0.5');
    await user.clear(threshold);
    expect(params).not.toHaveProperty('threshold');
    await user.click(screen.getByLabelText('Schema (optional)'));
    await user.paste('{"type": ');
    expect(screen.getByText('Not valid JSON yet.')).toBeInTheDocument();
    expect(screen.getByLabelText('Schema (optional)')).toHaveValue('{"type": ');
  });

  it('shows server errors next to their field and keeps what was typed', async () => {
    const user = userEvent.setup();
    const { rerender } = render(<Harness onValue={() => undefined} />);
    await user.type(screen.getByLabelText('Threshold (optional)'), '7');
    rerender(<Harness errors={{ 'params.threshold': 'Must be at most 1' }} onValue={() => undefined} />);
    const threshold = screen.getByLabelText('Threshold (optional)');
    expect(threshold).toHaveAttribute('aria-invalid', 'true');
    expect(threshold).toHaveAccessibleDescription('Must be at most 1');
    expect(threshold).toHaveValue(7);
  });
});
