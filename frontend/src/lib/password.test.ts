import { describe, expect, it } from 'vitest';
import { checkPassword, passwordRules } from './password';

const passed = (p: string) =>
  Object.fromEntries(checkPassword(p).rules.map((r) => [r.id, r.passed])) as Record<string, boolean>;

describe('password rules', () => {
  it('has the five rules of the API policy', () => {
    expect(passwordRules.map((r) => r.id)).toEqual(['length', 'upper', 'lower', 'digit', 'special']);
  });

  it('checks each rule on its own', () => {
    expect(passed('')).toEqual({ length: false, upper: false, lower: false, digit: false, special: false });
    expect(passed('abcdefghijkl')).toEqual({ length: true, upper: false, lower: true, digit: false, special: false });
    expect(passed('ABC')).toMatchObject({ upper: true, lower: false, length: false });
    expect(passed('7')).toMatchObject({ digit: true });
    for (const c of '!@#$%^&*') expect(passed(c).special).toBe(true);
    // only the listed special characters count
    expect(passed('(')).toMatchObject({ special: false });
    expect(passed('Abcdefghij1?').special).toBe(false);
  });

  it('needs 12 characters, not 11', () => {
    expect(passed('Abcdefgh1!x').length).toBe(false);
    expect(passed('Abcdefgh1!xy').length).toBe(true);
  });

  it('is valid only when every rule passes', () => {
    expect(checkPassword('Abcdefgh1!xy').valid).toBe(true);
    expect(checkPassword('abcdefgh1!xy').valid).toBe(false);
    expect(checkPassword('ABCDEFGH1!XY').valid).toBe(false);
    expect(checkPassword('Abcdefghi!xy').valid).toBe(false);
    expect(checkPassword('Abcdefgh12xy').valid).toBe(false);
  });
});

describe('password strength', () => {
  it.each([
    ['', 'empty'],
    ['a', 'weak'],
    ['abcdefghijklmnop', 'weak'], // long but only length + lower
    ['abcdef1', 'weak'],
    ['Abcdef1', 'fair'], // 3 rules
    ['Abcdefgh1xyz', 'fair'], // 4 rules, no special
    ['Abcdefgh1!xy', 'good'], // all rules, 12 chars
    ['Abcdefgh1!xyzuvw', 'strong'], // all rules, 16 chars
  ] as const)('%j is %s', (pw, strength) => {
    expect(checkPassword(pw).strength).toBe(strength);
  });
});
