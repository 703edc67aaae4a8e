import { useState } from 'react';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { starterRubric, type Rubric } from '../rubric';
import { RubricBuilder } from './RubricBuilder';

function Harness({ errors = {}, onValue }: { errors?: Record<string, string>; onValue?: (r: Rubric) => void }) {
  const [value, setValue] = useState<Rubric>(starterRubric());
  return (
    <RubricBuilder
      value={value}
      errors={errors}
      onChange={(next) => {
        setValue(next);
        onValue?.(next);
      }}
    />
  );
}

describe('RubricBuilder', () => {
  it('shows a live weight sum that must reach 1', async () => {
    const user = userEvent.setup();
    let last: Rubric | null = null;
    render(<Harness onValue={(r) => (last = r)} />);
    const sum = screen.getByTestId('weight-sum');
    expect(sum).toHaveTextContent('Weights sum to 1.00 ✓');

    const first = screen.getAllByLabelText('Weight')[0];
    await user.clear(first);
    await user.type(first, '0.8');
    expect(sum).toHaveTextContent('Weights sum to 1.30 — they must sum to 1.00');
    expect(last!.criteria[0].weight).toBe(0.8);

    await user.click(screen.getByRole('button', { name: 'Add criterion' }));
    expect(screen.getAllByLabelText('Weight')).toHaveLength(3);
    await user.click(screen.getByRole('button', { name: 'Split weights evenly' }));
    expect(sum).toHaveTextContent('Weights sum to 1.00 ✓');
    expect(last!.criteria.map((c) => c.weight)).toEqual([0.33, 0.33, 0.34]);
  });

  it('keeps at least two criteria and shows server errors next to the criterion field', async () => {
    const user = userEvent.setup();
    render(<Harness errors={{ 'params.rubric.criteria[1].description': 'must be text of 10 to 500 characters' }} />);
    expect(screen.getByRole('button', { name: 'Remove criterion 1' })).toBeDisabled();
    const description = screen.getAllByLabelText('What the judge checks')[1];
    expect(description).toHaveAttribute('aria-invalid', 'true');
    expect(description).toHaveAccessibleDescription('must be text of 10 to 500 characters');
    await user.click(screen.getByRole('button', { name: 'Add criterion' }));
    expect(screen.getByRole('button', { name: 'Remove criterion 1' })).toBeEnabled();
  });
});
