import { defineConfig } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// One fresh instance directory (database, secrets, embedded Redis) per e2e run.
// Set here in the main process, the value is inherited by the test workers.
process.env.ASSAY_E2E_INSTANCE_PATH ??= mkdtempSync(join(tmpdir(), 'assay-e2e-'));

// ASSAY_E2E_PORT_BASE lets several e2e runs share one machine (web, API, fake provider).
const PORT_BASE = Number(process.env.ASSAY_E2E_PORT_BASE ?? 8198);
const WEB_PORT = PORT_BASE === 8198 ? 5199 : PORT_BASE + 2;
// Specs reach the fake provider's controls here.
process.env.ASSAY_E2E_FAKE_URL ??= `http://127.0.0.1:${PORT_BASE}`;
const baseURL = `http://127.0.0.1:${WEB_PORT}`;

export default defineConfig({
  testDir: './e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list']] : [['list'], ['html', { open: 'never' }]],
  use: {
    baseURL,
    trace: 'off',
    video: 'off',
    screenshot: 'only-on-failure',
    browserName: 'chromium',
    launchOptions: {
      // Browsers cannot be downloaded here: use the system's Chromium.
      executablePath: process.env.ASSAY_E2E_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    // The whole stack: fake LLM provider, API, RQ worker and `npm run preview`
    // of the existing build (run `npm run build` first).
    command: '../.venv/bin/assay up --no-build',
    url: `${baseURL}/api/health`,
    env: {
      ASSAY_INSTANCE_PATH: process.env.ASSAY_E2E_INSTANCE_PATH,
      ASSAY_PORT: String(PORT_BASE + 1),
      ASSAY_WEB_PORT: String(WEB_PORT),
      ASSAY_FAKE_PORT: String(PORT_BASE),
      // Every spec signs up its own users: more than one address's default registrations per 15 minutes.
      ASSAY_REGISTER_IP_LIMIT: '100000',
    },
    reuseExistingServer: false,
    timeout: 180_000,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 15_000 },
  },
});
