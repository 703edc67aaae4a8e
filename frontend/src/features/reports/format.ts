import { formatMicros } from '@/lib/money';

export const DASH = '—';

export function num(v: number | null | undefined, digits = 2): string {
  return v === null || v === undefined || Number.isNaN(v) ? DASH : v.toFixed(digits);
}

export function pct(v: number | null | undefined, digits = 1): string {
  return v === null || v === undefined ? DASH : `${(v * 100).toFixed(digits)}%`;
}

/** A signed number: "+0.095", "−0.120", "±0.000" (a true minus sign, as the tables print). */
export function signed(v: number, digits = 3): string {
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(digits)}`;
}

/**
 * A change already in percent, as the API gives `delta_vs_previous.percentage`
 * (0.559 → 0.654 is 16.99…): "+17.0%". Never multiplied again.
 */
export function percentChange(percent: number | null | undefined, digits = 1): string {
  return percent === null || percent === undefined || Number.isNaN(percent) ? DASH : `${signed(percent, digits)}%`;
}

export function int(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : Math.round(v).toLocaleString('en-US');
}

/** "[0.50, 0.67]", or a note when there is no interval (fewer than two cases). */
export function interval(low: number | null | undefined, high: number | null | undefined, f: (v: number) => string = (v) => num(v)): string {
  if (low === null || low === undefined || high === null || high === undefined) return 'no interval';
  return `[${f(low)}, ${f(high)}]`;
}

export function money(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return DASH;
  // Cost per output can be a fraction of a micro-dollar: keep up to 6 decimals honestly.
  return formatMicros(Math.round(micros));
}

export function ms(v: number | null | undefined): string {
  return v === null || v === undefined ? DASH : `${v.toLocaleString('en-US')} ms`;
}

export const modelName = (name: string | null | undefined) => name ?? 'Recorded traces (no model)';

/** recharts error bar: [distance below, distance above] the value. */
export function errorBar(value: number | null | undefined, low: number | null | undefined, high: number | null | undefined): [number, number] | undefined {
  if (value === null || value === undefined || low === null || low === undefined || high === null || high === undefined) return undefined;
  return [Math.max(0, value - low), Math.max(0, high - value)];
}

/**
 * Series colours: each at least 4.5:1 against white (WCAG AA for text, above the 3:1 for
 * graphics). Series also differ by marker shape and dash pattern, never by colour alone.
 */
export const SERIES = ['#4338ca', '#b45309', '#047857', '#be123c', '#0369a1', '#6d28d9', '#3f3f46', '#0f766e'];
export const DASHES = ['', '6 3', '2 3', '8 3 2 3', '4 4', '1 2', '10 4', '3 6'];
export const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross', 'star', 'wye', 'circle'] as const;
