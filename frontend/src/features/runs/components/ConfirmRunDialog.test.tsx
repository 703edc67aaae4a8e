import { render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { RunEstimate } from '../api';
import { ConfirmRunDialog } from './ConfirmRunDialog';

function estimate(over: Partial<RunEstimate> = {}): RunEstimate {
  return {
    dataset_version_id: 8, cases: 10, repeats: 1, calls: 10, low_micros: 5_000, high_micros: 20_000,
    judge_calls: 0, judge_low_micros: 0, judge_high_micros: 0, complete: true, unpriced_models: [],
    per_target: [{ label: 'Mini', model_id: 5, calls: 10, input_tokens: 100, output_tokens_low: 10, output_tokens_high: 40, low_micros: 5_000, high_micros: 20_000, priced: true }],
    assumptions: { low_output_share: 0.25, default_max_tokens: 1024, tokens_per_message: 3 },
    problems: [],
    ...over,
  };
}

function show(e: RunEstimate) {
  render(
    <ConfirmRunDialog open estimate={e} modelName={(id) => `model ${id}`} budgetMicros={null} starting={false} startError={null} onStart={vi.fn()} onClose={vi.fn()} />,
  );
  return screen.getByRole('dialog', { name: 'Start this run?' });
}

describe('ConfirmRunDialog', () => {
  it('shows no judge row for a run without LLM judges', () => {
    const dialog = show(estimate());
    expect(within(dialog).queryByTestId('estimate-judges')).not.toBeInTheDocument();
  });

  it('lists the LLM judges with their calls and cost, included in the total', () => {
    const dialog = show(estimate({ judge_calls: 20, judge_low_micros: 3_000, judge_high_micros: 40_000, low_micros: 8_000, high_micros: 60_000 }));
    expect(within(dialog).getByTestId('estimate-judges')).toHaveTextContent('LLM judges20$0.003 – $0.04');
    expect(within(dialog).getByTestId('estimate-total')).toHaveTextContent('$0.008 – $0.06');
  });
});
