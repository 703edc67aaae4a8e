import { describe, expect, it } from 'vitest';
import { ApiError, fieldErrors, toApiError } from './errors';

describe('fieldErrors', () => {
  it('flattens webargs locations and keeps the first message per field', () => {
    const e = toApiError(422, {
      code: 'VALIDATION_ERROR', status: 422, message: 'Invalid input',
      errors: { json: { password: ['Too short.', 'No digit.'], email: ['Not an email.'] } },
    });
    expect(fieldErrors(e)).toEqual({ password: 'Too short.', email: 'Not an email.' });
  });

  it('handles nested fields and plain objects', () => {
    const e = new ApiError({ code: 'X', status: 422, message: 'm', errors: { json: { params: { temperature: ['Too high.'] } }, name: 'Bad.' } });
    expect(fieldErrors(e)).toEqual({ 'params.temperature': 'Too high.', name: 'Bad.' });
  });

  it('is empty for other errors', () => {
    expect(fieldErrors(new Error('x'))).toEqual({});
  });
});
