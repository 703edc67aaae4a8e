// First contentful paint of the built SPA in Chromium, cold cache (a fresh browser context
// per sample): the login page, and a project page after signing in.
// Usage: node scripts/fcp.mjs BASE_URL EMAIL PASSWORD PROJECT_ID [SAMPLES]
// Prints one JSON line: {"login_ms": [...], "project_ms": [...], "login_content_ms": [...],
// "project_content_ms": [...]} (FCP, and when the page's own content was first painted).
import { chromium } from '@playwright/test';

const [baseURL, email, password, projectId, samplesArg] = process.argv.slice(2);
if (!baseURL || !email || !password || !projectId) {
  console.error('usage: node scripts/fcp.mjs BASE_URL EMAIL PASSWORD PROJECT_ID [SAMPLES]');
  process.exit(2);
}
const samples = Number(samplesArg ?? 5);

const browser = await chromium.launch({
  executablePath: process.env.ASSAY_E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

/**
 * One navigation in a page of `context`: FCP (ms from the navigation's start), and when
 * the page's own content (`selector`: the sign-in form, the runs list) was first in a frame.
 */
async function measure(context, path, selector) {
  const page = await context.newPage();
  await page.goto(new URL(path, baseURL).href, { waitUntil: 'commit' });
  const ready = await page.waitForFunction((sel) => (document.querySelector(sel) ? performance.now() : null), selector, {
    polling: 'raf',
    timeout: 15_000,
  });
  const content = await ready.jsonValue();
  const fcp = await page.waitForFunction(
    () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null,
    null,
    { timeout: 15_000 },
  );
  const value = await fcp.jsonValue();
  await page.close();
  return [Math.round(value), Math.round(content)];
}

const result = { login_ms: [], project_ms: [], login_content_ms: [], project_content_ms: [] };
const LOGIN = 'form button[type=submit]';
const PROJECT = '#runs-heading';
try {
  // Warm the server once (Vite's preview and the API's first request), not the browser.
  {
    const context = await browser.newContext();
    await measure(context, '/login', LOGIN);
    await context.close();
  }
  for (let i = 0; i < samples; i++) {
    const context = await browser.newContext(); // empty HTTP cache, no cookies
    const [fcp, content] = await measure(context, '/login', LOGIN);
    result.login_ms.push(fcp);
    result.login_content_ms.push(content);
    await context.close();
  }
  for (let i = 0; i < samples; i++) {
    const context = await browser.newContext();
    // Sign in through the API only: the session cookie, and nothing of the bundle cached.
    const reply = await context.request.post(new URL('/api/auth/login', baseURL).href, {
      data: { email, password, remember_me: false },
    });
    if (!reply.ok()) throw new Error(`login failed: ${reply.status()} ${await reply.text()}`);
    const [fcp, content] = await measure(context, `/projects/${projectId}`, PROJECT);
    result.project_ms.push(fcp);
    result.project_content_ms.push(content);
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
