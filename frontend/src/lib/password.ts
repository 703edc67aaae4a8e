/** Password policy shared with the API (FR-UM-001): every rule must pass. */
export interface PasswordRule {
  id: 'length' | 'upper' | 'lower' | 'digit' | 'special';
  label: string;
  test: (password: string) => boolean;
}

export const SPECIAL_CHARACTERS = '!@#$%^&*';

export const passwordRules: readonly PasswordRule[] = [
  { id: 'length', label: 'At least 12 characters', test: (p) => [...p].length >= 12 },
  { id: 'upper', label: 'An uppercase letter', test: (p) => /[A-Z]/.test(p) },
  { id: 'lower', label: 'A lowercase letter', test: (p) => /[a-z]/.test(p) },
  { id: 'digit', label: 'A digit', test: (p) => /[0-9]/.test(p) },
  {
    id: 'special',
    label: `One of ${SPECIAL_CHARACTERS}`,
    test: (p) => [...p].some((c) => SPECIAL_CHARACTERS.includes(c)),
  },
];

export type Strength = 'empty' | 'weak' | 'fair' | 'good' | 'strong';

export interface PasswordCheck {
  rules: Array<{ id: PasswordRule['id']; label: string; passed: boolean }>;
  passedCount: number;
  valid: boolean;
  strength: Strength;
}

/**
 * weak: two rules or fewer; fair: three or four; good: all five rules;
 * strong: all five and at least 16 characters.
 */
export function checkPassword(password: string): PasswordCheck {
  const rules = passwordRules.map((r) => ({ id: r.id, label: r.label, passed: r.test(password) }));
  const passedCount = rules.filter((r) => r.passed).length;
  const valid = passedCount === rules.length;
  let strength: Strength;
  if (password.length === 0) strength = 'empty';
  else if (passedCount <= 2) strength = 'weak';
  else if (!valid) strength = 'fair';
  else if ([...password].length >= 16) strength = 'strong';
  else strength = 'good';
  return { rules, passedCount, valid, strength };
}

export const strengthLabel: Record<Strength, string> = {
  empty: '',
  weak: 'Weak',
  fair: 'Fair',
  good: 'Good',
  strong: 'Strong',
};
