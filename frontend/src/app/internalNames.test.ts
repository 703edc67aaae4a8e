import { matchRoutes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { routes } from './router';

// Names from the specs and the code that mean nothing to a user of the product.
const INTERNAL = [
  /\bFR-[A-Z]{2}-\d{3}\b/,
  /\bedison\b/i,
  /rag-eval-data-model/,
  /RAGMetrics/,
  /rules_dsl/,
  /ScoreResult/,
  /\bmyarena\b/i,
  /\b(evalarena|spec|DESIGN(\.md)?) §/i,
];
// A case shown by its database id instead of the dataset's number.
const CASE_ID_SHOWN = /(#\$?|Case \$?)\{(?![\w.]*case_number)[\w.]*case_id\}/;

// every source file of the product (tests, generated API types and test helpers aside)
const FILES = import.meta.glob(['../**/*.{ts,tsx}', '!../**/*.test.{ts,tsx}', '!../**/*.d.ts', '!../test/**'], {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

/** The file without its comments (a `//` right after code, as in a URL, is kept). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}

const sources = Object.entries(FILES).map(([path, text]) => [path, code(text)] as const);

describe('product text', () => {
  it('names no spec, requirement id or code identifier', () => {
    const found = sources.flatMap(([path, text]) => INTERNAL.filter((p) => p.test(text)).map((p) => `${path}: ${p}`));
    expect(found).toEqual([]);
  });

  it('shows cases by the dataset\u2019s number, never by their database id', () => {
    expect(sources.length).toBeGreaterThan(100);
    const found = sources.filter(([, text]) => CASE_ID_SHOWN.test(text)).map(([path]) => path);
    expect(found).toEqual([]);
  });

  it('opens the Runs tab at /projects/:id/runs', () => {
    const leaf = matchRoutes(routes, '/projects/7/runs')?.at(-1)?.route;
    expect(leaf?.path).not.toBe('*');
    expect(leaf?.lazy).toBeDefined();
  });
});
