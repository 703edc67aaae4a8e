import { describe, expect, it } from 'vitest';
import { mergeForms } from './merge';

// After a 412 the wizard merges what this tab typed into what the server holds now.
describe('mergeForms after a stale save', () => {
  const base = { goal: 'typed', rubric: '', prompt: '' };

  it('keeps the newer work of the other side (a template applied) where this tab changed nothing', () => {
    const theirs = { goal: 'from the template', rubric: 'template rubric', prompt: 'template prompt' };
    const { merged, conflicts } = mergeForms(base, { ...base }, theirs);
    expect(merged).toEqual(theirs);
    expect(conflicts).toEqual([]);
  });

  it('applies a field only this tab changed on top of theirs', () => {
    const theirs = { ...base, rubric: 'theirs' };
    const { merged, conflicts } = mergeForms(base, { ...base, prompt: 'mine' }, theirs);
    expect(merged).toEqual({ goal: 'typed', rubric: 'theirs', prompt: 'mine' });
    expect(conflicts).toEqual([]);
  });

  it('names a field both changed differently and keeps theirs until the user chooses', () => {
    const theirs = { ...base, goal: 'theirs' };
    const { merged, conflicts } = mergeForms(base, { ...base, goal: 'mine' }, theirs);
    expect(merged.goal).toBe('theirs');
    expect(conflicts).toEqual(['goal']);
  });

  it('is no conflict when both made the same change', () => {
    const same = { ...base, goal: 'both' };
    expect(mergeForms(base, same, same)).toEqual({ merged: same, conflicts: [] });
  });

  it('compares nested values by content', () => {
    const b = { criteria: [{ name: 'a' }] };
    const { merged, conflicts } = mergeForms(b, { criteria: [{ name: 'a' }] }, { criteria: [{ name: 'b' }] });
    expect(merged.criteria).toEqual([{ name: 'b' }]);
    expect(conflicts).toEqual([]);
  });
});
