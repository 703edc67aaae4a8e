/**
 * Prices are stored as integer micro-dollars (1 dollar = 1,000,000 micros) and
 * entered as decimal dollars. Conversions go through strings, never through
 * floating-point multiplication, so "0.1" is exactly 100000.
 */

const MICROS_PER_DOLLAR = 1_000_000;
const DECIMAL_RE = /^(\d*)(?:\.(\d*))?$/;

export type ParsedPrice = { ok: true; micros: number | null } | { ok: false; error: string };

/** "0.15" → 150000, "2.5" → 2500000, "" → null (no price). At most 6 decimals. */
export function parseDollars(input: string): ParsedPrice {
  const s = input.trim().replace(/^\$/, '').replace(/,/g, '');
  if (s === '') return { ok: true, micros: null };
  const m = DECIMAL_RE.exec(s);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) {
    return { ok: false, error: 'Enter a price in dollars, such as 0.15.' };
  }
  const whole = m[1] || '0';
  const frac = m[2] ?? '';
  if (frac.length > 6) return { ok: false, error: 'Use at most 6 decimals (one micro-dollar).' };
  const micros = Number(whole) * MICROS_PER_DOLLAR + Number(frac.padEnd(6, '0'));
  if (!Number.isSafeInteger(micros)) return { ok: false, error: 'That price is too large.' };
  return { ok: true, micros };
}

/** Convenience for tests and callers that already validated: throws on invalid input. */
export function dollarsToMicros(input: string): number | null {
  const parsed = parseDollars(input);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.micros;
}

/** 150000 → "0.15", 2500000 → "2.5", null → "" (the inverse of parseDollars, for form fields). */
export function microsToDollars(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return '';
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(micros));
  const whole = Math.floor(abs / MICROS_PER_DOLLAR);
  const frac = String(abs % MICROS_PER_DOLLAR).padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/**
 * Dollars for display: at least 2 decimals, up to 6, no rounding drift.
 * 150000 → "$0.15", 2500000 → "$2.50", 75000 → "$0.075", 1234500000 → "$1,234.50".
 */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(micros));
  const whole = Math.floor(abs / MICROS_PER_DOLLAR);
  let frac = String(abs % MICROS_PER_DOLLAR).padStart(6, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${sign}$${whole.toLocaleString('en-US')}.${frac}`;
}

/** A price per million tokens, or an em dash when there is none (callers flag it as unpriced). */
export function formatPricePerMtok(micros: number | null | undefined): string {
  return micros === null || micros === undefined ? '—' : formatMicros(micros);
}
