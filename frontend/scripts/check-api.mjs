// Fails when src/api/schema.d.ts is stale with respect to src/api/openapi.json.
// Regenerates into a temp file with the same generator and options as `npm run gen:api`
// and compares byte for byte.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const spec = join(root, 'src/api/openapi.json');
const committed = join(root, 'src/api/schema.d.ts');
const dir = mkdtempSync(join(tmpdir(), 'assay-check-api-'));
const fresh = join(dir, 'schema.d.ts');
try {
  const bin = join(root, 'node_modules/.bin/openapi-typescript');
  // The options of `npm run gen:api` itself (between the document and -o), so they never drift.
  const gen = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['gen:api'].split(/\s+/);
  const options = gen.slice(gen.indexOf('src/api/openapi.json') + 1, gen.indexOf('-o'));
  execFileSync(bin, [spec, ...options, '-o', fresh], { stdio: ['ignore', 'ignore', 'inherit'] });
  const a = readFileSync(fresh, 'utf8');
  let b = '';
  try {
    b = readFileSync(committed, 'utf8');
  } catch {
    console.error('check:api: src/api/schema.d.ts is missing. Run `npm run gen:api` and commit it.');
    process.exit(1);
  }
  if (a !== b) {
    const al = a.split('\n');
    const bl = b.split('\n');
    const line = al.findIndex((l, i) => l !== bl[i]);
    console.error(
      'check:api: src/api/schema.d.ts is out of date with src/api/openapi.json ' +
        `(first difference at line ${line + 1}).\n` +
        'Run `npm run gen:api` and commit the regenerated file.',
    );
    process.exit(1);
  }
  console.log('check:api: src/api/schema.d.ts matches src/api/openapi.json.');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
