import { describe, expect, it } from 'vitest';
import { changelogError, detectVariables, parseTools, sections } from './api';
import cases from './variableCases.json';

describe('detectVariables', () => {
  // The same cases tests/api/test_prompt_variables.py runs through the server's parser.
  it.each(cases)('finds what the server parses in $texts', ({ texts, variables }) => {
    expect(detectVariables(...texts)).toEqual(variables);
  });
});

describe('changelogError', () => {
  it('asks for 10 to 500 characters, surrounding spaces not counted', () => {
    expect(changelogError('x'.repeat(9))).toMatch(/at least 10/);
    expect(changelogError(`  ${'x'.repeat(9)}  `)).toMatch(/9 so far/);
    expect(changelogError('x'.repeat(10))).toBeNull();
    expect(changelogError('x'.repeat(500))).toBeNull();
    expect(changelogError('x'.repeat(501))).toMatch(/At most 500/);
  });
});

describe('parseTools', () => {
  const tool = { name: 'lookup', parameters: { type: 'object', properties: {} } };
  it('takes an empty text as no tools and a valid array as is', () => {
    expect(parseTools('  ')).toEqual({ tools: [], error: null });
    expect(parseTools(JSON.stringify([tool]))).toEqual({ tools: [tool], error: null });
  });
  it.each([
    ['[', /Not valid JSON/],
    ['{"name": "x"}', /JSON array/],
    ['[1]', /Tool 1 must be an object/],
    ['[{"name": "bad name"}]', /name must be/],
    ['[{"name": "a"}, {"name": "a"}]', /Tool 2: name "a" is used twice/],
    ['[{"name": "a", "extra": 1}]', /unknown keys: extra/],
    ['[{"name": "a", "parameters": {"type": "string"}}]', /"type": "object"/],
  ])('refuses %s', (text, message) => {
    expect(parseTools(text).error).toMatch(message);
  });
});

describe('sections', () => {
  it('renders every part of a version a diff compares', () => {
    const parts = sections({ template: 'T', system: null, few_shots: [{ input: 'hi', output: 'hello' }], tools: [{ name: 'x' }] });
    expect(parts.map((p) => p.label)).toEqual(['Template', 'System text', 'Few-shot examples', 'Tools']);
    expect(parts[1].text).toBe('');
    expect(parts[2].text).toBe('Example 1\nInput: hi\nOutput: hello\n');
    expect(JSON.parse(parts[3].text)).toEqual([{ name: 'x' }]);
  });

  it('writes tools with sorted keys, so the order they were typed in is no change', () => {
    const typed = sections({ template: '', system: null, few_shots: [], tools: [{ parameters: { type: 'object', properties: {} }, name: 'x' }] });
    const stored = sections({ template: '', system: null, few_shots: [], tools: [{ name: 'x', parameters: { properties: {}, type: 'object' } }] });
    expect(typed[3].text).toBe(stored[3].text);
    expect(typed[3].text.indexOf('"name"')).toBeLessThan(typed[3].text.indexOf('"parameters"'));
  });
});
