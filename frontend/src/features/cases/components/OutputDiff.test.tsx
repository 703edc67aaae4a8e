import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { labelledOutputs } from '../api';
import { caseOutput, caseView } from '../testFixtures';
import { OutputDiff } from './OutputDiff';

const view = caseView({
  targets: [
    { target_id: 1, label: 'Fast', model_id: 1, outputs: [caseOutput({ text: 'The capital is Paris.' })] },
    { target_id: 2, label: 'Slow', model_id: 2, outputs: [caseOutput({ text: 'The capital city is Lyon.' })] },
    { target_id: 3, label: 'Echo', model_id: 3, outputs: [caseOutput({ text: 'The capital is Paris.' })] },
    { target_id: 4, label: 'Down', model_id: 4, outputs: [caseOutput({ status: 'failed', text: null })] },
  ],
});

describe('OutputDiff', () => {
  it('diffs the first two outputs by words, marking added and removed text in words too', () => {
    render(<OutputDiff outputs={labelledOutputs(view)} />);
    expect(screen.getByLabelText('From')).toHaveValue(String(view.targets[0]!.outputs[0]!.id));
    const text = screen.getByTestId('diff-text');
    const removed = text.querySelectorAll('del');
    const added = text.querySelectorAll('ins');
    expect([...removed].map((d) => d.textContent)).toEqual(['[removed: −Paris]']);
    expect([...added].map((d) => d.textContent)).toEqual(['[added: +city ]', '[added: +Lyon]']);
    expect(screen.getByText(/1 word removed, 2 words added from “Fast” to “Slow”/)).toBeInTheDocument();
    // a failed cell has no text: it cannot be picked
    expect(within(screen.getByLabelText('To')).queryByRole('option', { name: 'Down' })).toBeNull();
  });

  it('compares whichever two outputs are chosen, and by lines', async () => {
    const user = userEvent.setup();
    render(<OutputDiff outputs={labelledOutputs(view)} />);
    await user.selectOptions(screen.getByLabelText('To'), 'Echo');
    expect(screen.getByText('The two outputs are identical.')).toBeInTheDocument();
    expect(screen.getByTestId('diff-text').querySelectorAll('ins, del')).toHaveLength(0);

    await user.selectOptions(screen.getByLabelText('From'), 'Slow');
    await user.click(screen.getByLabelText('By lines'));
    const text = screen.getByTestId('diff-text');
    expect(text.querySelector('del')?.textContent).toBe('[removed: −The capital city is Lyon.]');
    expect(text.querySelector('ins')?.textContent).toBe('[added: +The capital is Paris.]');
    expect(screen.getByText(/1 line removed, 1 line added from “Slow” to “Echo”/)).toBeInTheDocument();
  });

  it('says when there is nothing to compare', () => {
    render(<OutputDiff outputs={labelledOutputs(caseView({ targets: [view.targets[0]!, view.targets[3]!] }))} />);
    expect(screen.getByText('Nothing to compare yet')).toBeInTheDocument();
  });
});
