import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/api/errors';
import { StaleWriteNotice } from './StaleWriteNotice';

const stale = new ApiError({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {} });

describe('StaleWriteNotice', () => {
  it('on a 412 says so as an alert, repeats the edit and offers Reload', async () => {
    const onReload = vi.fn();
    render(<StaleWriteNotice error={stale} edit='name "Mine"' onReload={onReload} />);
    const alert = screen.getByRole('alert');
    expect(alert).toHaveTextContent('This was changed elsewhere — reload to see the latest; your edit:');
    expect(alert).toHaveTextContent('name "Mine"');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Reload' }));
    expect(onReload).toHaveBeenCalledOnce();
  });

  it('shows nothing for other errors or none', () => {
    const { container, rerender } = render(<StaleWriteNotice error={new ApiError({ code: 'CONFLICT', status: 409, message: 'x', errors: {} })} onReload={() => {}} />);
    expect(container).toBeEmptyDOMElement();
    rerender(<StaleWriteNotice error={null} onReload={() => {}} />);
    expect(container).toBeEmptyDOMElement();
  });
});
