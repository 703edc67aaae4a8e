import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '@/test/utils';
import { RunExports } from './RunExports';

describe('RunExports', () => {
  it('offers CSV, JSON and JUnit XML downloads of the run, and a link to compare it', () => {
    renderWithProviders(<RunExports projectId={3} runId={7} />);
    const group = screen.getByRole('group', { name: 'Download results' });
    const csv = within(group).getByRole('link', { name: 'Download results as CSV' });
    const json = within(group).getByRole('link', { name: 'Download results as JSON' });
    const junit = within(group).getByRole('link', { name: 'Download results as JUnit XML' });
    expect(csv).toHaveAttribute('href', '/api/projects/3/runs/7/export?format=csv');
    expect(json).toHaveAttribute('href', '/api/projects/3/runs/7/export?format=json');
    expect(junit).toHaveAttribute('href', '/api/projects/3/runs/7/export?format=junit');
    for (const link of [csv, json, junit]) expect(link).toHaveAttribute('download');
    expect(screen.getByRole('link', { name: 'Compare' })).toHaveAttribute('href', '/projects/3/runs/compare?head=7');
  });
});
