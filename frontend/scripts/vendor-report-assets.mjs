// Copies the chart library of the single-file HTML report (`assay report`) from
// node_modules into the Python package, which inlines it: `pip install` alone then
// produces a report that needs no network. Run after a chart.js upgrade; a test checks
// the committed copy equals node_modules'.
import { copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, '..', 'node_modules', 'chart.js', 'dist', 'chart.umd.min.js');
const target = join(here, '..', '..', 'backend', 'assay', 'core', 'evalreport', 'assets', 'chart.umd.min.js');
copyFileSync(source, target);
console.log(`vendored ${source} -> ${target}`);
