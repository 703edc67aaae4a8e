// Opens an `assay report` HTML file in Chromium from a file:// URL with every network
// request blocked and counted, and prints one JSON line of what it found: requests
// attempted, console errors, pixels drawn on each chart, the outputs table, one output
// opened, and when the page was first painted. Used by tests/evalreport and the bench.
// Usage: node scripts/report-check.mjs '{"file": "/abs/report.html", "width": 1400,
//   "screenshot": "/tmp/x.png", "search": "text", "samples": 0, "quick": false}'
// ("quick": only open it and look at the charts, no clicking around)
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const opts = JSON.parse(process.argv[2] ?? '{}');
const url = pathToFileURL(opts.file).href;
const browser = await chromium.launch({
  executablePath: process.env.ASSAY_E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

const result = { requests: [], failed: [], consoleErrors: [], pageErrors: [] };

async function openReport(context) {
  const page = await context.newPage();
  page.on('request', (req) => {
    if (req.url() !== url) result.requests.push(req.url());
  });
  page.on('requestfailed', (req) => result.failed.push([req.url(), req.failure()?.errorText ?? '']));
  page.on('console', (msg) => {
    if (msg.type() === 'error') result.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => result.pageErrors.push(String(err)));
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('#output-page table tbody tr, #loading', { timeout: 30_000 });
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'charts' || /could not|cannot/.test(document.getElementById('loading')?.textContent ?? ''), null, { timeout: 30_000 });
  return page;
}

async function newContext() {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1400, height: 900 } });
  // Everything but the report file itself is refused (and counted above).
  await context.route('**/*', (route) => (route.request().url() === url ? route.continue() : route.abort('blockedbyclient')));
  return context;
}

async function exercise() {
  const context = await newContext();
  await context.setOffline(true);
  const page = await openReport(context);
  result.loading = await page.locator('#loading').count() ? await page.locator('#loading').textContent() : null;
  result.charts = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('canvas')].map((c) => {
        const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] > 0) painted++;
        return [c.id, { painted, chart: !!window.Chart?.getChart(c), points: window.Chart?.getChart(c)?.data.datasets.reduce((a, d) => a + d.data.filter((v) => v !== null).length, 0) ?? 0 }];
      }),
    ),
  );
  result.rows = await page.locator('#output-page tbody tr').count();
  result.pageStatus = await page.locator('#page-status').textContent();
  result.runRows = await page.locator('#runs tbody tr').count();
  result.horizontalScroll = await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
  result.fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);
  if (opts.screenshot) await page.screenshot({ path: opts.screenshot, fullPage: true });
  if (opts.quick) return; // loaded and drawn: enough
  // paging, a filter by model and by scorer verdict, the search, one output opened
  const next = page.locator('button.pager', { hasText: 'Next' });
  if (await next.isEnabled()) {
    await next.click();
    result.pageTwoStatus = await page.locator('#page-status').textContent();
  }
  const models = await page.locator('#filter-model option').count();
  if (models > 1) {
    await page.selectOption('#filter-model', { index: 1 });
    result.modelFilterStatus = await page.locator('#page-status').textContent();
    result.modelFilterModels = [...new Set(await page.locator('#output-page tbody tr td:nth-child(2)').allTextContents())];
    await page.selectOption('#filter-model', { index: 0 });
  }
  if ((await page.locator('#filter-scorer option').count()) > 1) {
    await page.selectOption('#filter-scorer', { index: 1 });
    await page.selectOption('#filter-outcome', 'fail');
    result.scorerFilterStatus = await page.locator('#page-status').textContent();
    result.scorerFilterVerdicts = [...new Set(await page.locator('#output-page tbody tr td:nth-child(5)').allTextContents())];
    await page.selectOption('#filter-outcome', 'any');
    await page.selectOption('#filter-scorer', { index: 0 });
  }
  if (opts.search) {
    await page.fill('#filter-text', opts.search);
    await page.waitForFunction((n) => document.querySelectorAll('#output-page tbody tr').length <= n, 50);
    await page.waitForTimeout(400);
    result.searchStatus = await page.locator('#page-status').textContent();
  }
  await page.locator('#output-page button[data-output]').first().click();
  result.openedHeading = await page.locator('#output-heading').textContent();
  result.openedText = await page.locator('#output-text').textContent();
  result.openedEvaluations = await page.locator('#output-detail table tbody tr').count();
  result.injected = await page.evaluate(() => window.__assayInjected ?? null);
  if (result.runRows > 1) {
    // another run from the run list: its detail, charts and outputs replace the first's
    await page.locator('#runs button[data-run="0"]').click();
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'charts');
    result.switchedHeading = await page.locator('#detail-heading').textContent();
    result.switchedStatus = await page.locator('#page-status').textContent();
    result.switchedCharts = await page.evaluate(() => [...document.querySelectorAll('canvas')].filter((c) => window.Chart?.getChart(c)).length);
  }
  if (opts.screenshotDetail) await page.locator('#output-detail').screenshot({ path: opts.screenshotDetail });
  await context.close();
  // First contentful paint, cold: a fresh context per sample
  result.fcpSamples = [];
  result.readySamples = [];
  result.tableSamples = [];
  for (let i = 0; i < (opts.samples ?? 0); i++) {
    const ctx = await newContext();
    const p = await ctx.newPage();
    await p.goto(url, { waitUntil: 'commit' });
    const table = await p.waitForFunction(() => (document.querySelector('#output-page tbody tr') ? performance.now() : null), null, { polling: 'raf', timeout: 30_000 });
    result.tableSamples.push(Math.round(await table.jsonValue()));
    const ready = await p.waitForFunction(() => (document.documentElement.dataset.ready === 'charts' ? performance.now() : null), null, { polling: 'raf', timeout: 30_000 });
    result.readySamples.push(Math.round(await ready.jsonValue()));
    const fcp = await p.waitForFunction(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null, null, { timeout: 30_000 });
    result.fcpSamples.push(Math.round(await fcp.jsonValue()));
    await ctx.close();
  }
}

try {
  await exercise();
} finally {
  await browser.close();
  console.log(JSON.stringify(result));
}
