// First contentful paint of an EvalArena workspace (the built SPA in Chromium, cold cache:
// a fresh browser context per sample, signed in through the API only).
// Usage: node scripts/arena-fcp.mjs BASE_URL EMAIL PASSWORD CHALLENGE_ID [SAMPLES]
// Prints one JSON line: {"fcp_ms": [...], "content_ms": [...]} (FCP, and when the
// workspace's transcript, the first dev trace's messages, was first painted).
import { chromium } from '@playwright/test';

const [baseURL, email, password, challengeId, samplesArg] = process.argv.slice(2);
if (!baseURL || !email || !password || !challengeId) {
  console.error('usage: node scripts/arena-fcp.mjs BASE_URL EMAIL PASSWORD CHALLENGE_ID [SAMPLES]');
  process.exit(2);
}
const samples = Number(samplesArg ?? 5);
const CONTENT = '[data-testid=pane-context] ol[aria-label=Messages] li';

const browser = await chromium.launch({
  executablePath: process.env.ASSAY_E2E_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

async function sample() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const reply = await context.request.post(new URL('/api/auth/login', baseURL).href, { data: { email, password, remember_me: false } });
  if (!reply.ok()) throw new Error(`login failed: ${reply.status()} ${await reply.text()}`);
  const page = await context.newPage();
  await page.goto(new URL(`/arena/${challengeId}`, baseURL).href, { waitUntil: 'commit' });
  const ready = await page.waitForFunction((sel) => (document.querySelector(sel) ? performance.now() : null), CONTENT, {
    polling: 'raf',
    timeout: 20_000,
  });
  const content = await ready.jsonValue();
  const fcp = await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null, null, {
    timeout: 20_000,
  });
  const value = await fcp.jsonValue();
  await context.close();
  return [Math.round(value), Math.round(content)];
}

const result = { fcp_ms: [], content_ms: [] };
try {
  await sample(); // warms the servers, not the browser
  for (let i = 0; i < samples; i++) {
    const [fcp, content] = await sample();
    result.fcp_ms.push(fcp);
    result.content_ms.push(content);
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
