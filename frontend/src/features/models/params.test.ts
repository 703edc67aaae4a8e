import { describe, expect, it } from 'vitest';
import { emptyParams, paramRules, paramsToForm, validateParams, type ParamForm } from './params';

const form = (over: Partial<ParamForm>): ParamForm => ({ ...emptyParams, ...over });

describe('parameter hints per provider', () => {
  it('range hints do not block: the value is still sent for the server to judge', () => {
    const check = validateParams('openai', form({ temperature: '5' }));
    expect(check.errors).toEqual({});
    expect(check.params).toEqual({ temperature: 5 });
  });

  it('temperature is 0-2, Anthropic 0-1', () => {
    expect(paramRules('openai').temperature).toMatchObject({ min: 0, max: 2 });
    expect(paramRules('anthropic').temperature).toMatchObject({ min: 0, max: 1 });
    expect(validateParams('openai', form({ temperature: '1.5' })).warnings).toEqual({});
    expect(validateParams('anthropic', form({ temperature: '1.5' })).warnings.temperature).toBe('Must be between 0 and 1.');
    expect(validateParams('openai', form({ temperature: '2.1' })).warnings.temperature).toBe('Must be between 0 and 2.');
    expect(validateParams('openai', form({ temperature: '-0.1' })).warnings.temperature).toBe('Must be between 0 and 2.');
  });

  it('top_p is 0-1 everywhere', () => {
    expect(validateParams('anthropic', form({ top_p: '0.9' })).params).toEqual({ top_p: 0.9 });
    expect(validateParams('openai', form({ top_p: '1.01' })).warnings.top_p).toBe('Must be between 0 and 1.');
  });

  it('penalties are -2..2 and seed an integer, none of them for Anthropic', () => {
    expect(validateParams('openai', form({ frequency_penalty: '-2', presence_penalty: '2', seed: '42' })).params).toEqual({
      frequency_penalty: -2,
      presence_penalty: 2,
      seed: 42,
    });
    expect(validateParams('openai', form({ presence_penalty: '2.5' })).warnings.presence_penalty).toBe('Must be between -2 and 2.');
    expect(validateParams('openai', form({ seed: '4.2' })).errors.seed).toBe('Enter a whole number.');
    const anthropic = validateParams('anthropic', form({ frequency_penalty: '0.5', presence_penalty: '0', seed: '1' })).warnings;
    expect(anthropic).toEqual({
      frequency_penalty: 'Not supported by Anthropic.',
      presence_penalty: 'Not supported by Anthropic.',
      seed: 'Not supported by Anthropic.',
    });
    expect(paramRules('anthropic').seed.supported).toBe(false);
    expect(paramRules('azure_openai').seed.supported).toBe(true);
  });

  it('max_tokens is a whole number ≥ 1', () => {
    expect(validateParams('openai', form({ max_tokens: '0' })).warnings.max_tokens).toBe('Must be at least 1.');
    expect(validateParams('openai', form({ max_tokens: '1.5' })).errors.max_tokens).toBe('Enter a whole number.');
    expect(validateParams('openai', form({ max_tokens: '256' })).params).toEqual({ max_tokens: 256 });
  });

  it('at most 4 stop strings, one per line, blank lines ignored', () => {
    expect(validateParams('openai', form({ stop: 'END\n\n###\n' })).params).toEqual({ stop: ['END', '###'] });
    expect(validateParams('openai', form({ stop: 'a\nb\nc\nd\ne' })).warnings.stop).toBe('At most 4 stop sequences.');
  });

  it('empty fields are left out; text is refused', () => {
    expect(validateParams('openai', emptyParams)).toEqual({ errors: {}, warnings: {}, params: {} });
    expect(validateParams('openai', form({ temperature: 'warm' })).errors.temperature).toBe('Enter a number.');
  });

  it('round-trips saved params into the form', () => {
    const f = paramsToForm({ temperature: 0.2, max_tokens: 100, stop: ['A', 'B'], seed: null });
    expect(f).toMatchObject({ temperature: '0.2', max_tokens: '100', stop: 'A\nB', seed: '' });
    expect(validateParams('openai', f).params).toEqual({ temperature: 0.2, max_tokens: 100, stop: ['A', 'B'] });
  });
});
