import { expect, type APIRequestContext, type Page } from '@playwright/test';

// What many specs do the same way: sign up a fresh user and sign in, and script the fake
// provider's replies (the e2e stack is the real one: `assay up` on the fake provider).

/** The fake provider's control endpoint (set by playwright.config.ts). */
export const FAKE_CONFIG = `${process.env.ASSAY_E2E_FAKE_URL!}/_fake/config`;

/** Registers a new account (its email starts with `prefix`): registering signs in and lands on /projects. */
export async function registerAndSignIn(page: Page, prefix: string): Promise<string> {
  const email = `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = 'Assay-Demo-2024!';
  await page.goto('/register');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/projects$/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
  return email;
}

/** Signs up (see registerAndSignIn), creates the user's first project and opens it; its id. */
export async function signUpWithProject(page: Page, prefix: string, name: string): Promise<string> {
  await registerAndSignIn(page, prefix);
  await page.getByRole('button', { name: 'Create your first project' }).click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.getByLabel('Project name').fill(name);
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(/\/projects\/\d+$/);
  return page.url().split('/').pop()!;
}

/** Scripted replies of the fake provider (`[]`: its usual answers again). */
export async function setScripts(request: APIRequestContext, scripts: unknown[]) {
  const reply = await request.post(FAKE_CONFIG, { data: { scripts } });
  expect(reply.ok()).toBeTruthy();
}

/** From a project's page: adds Assay's fake provider, labelled "Fake", and ends on the Models tab. */
export async function addFakeProvider(page: Page) {
  const tabs = page.getByRole('navigation', { name: 'Project sections' });
  await tabs.getByRole('link', { name: 'Providers' }).click();
  await page.getByRole('button', { name: 'Add provider' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add provider' });
  await dialog.getByLabel('Provider', { exact: true }).selectOption('fake');
  await dialog.getByLabel('Label', { exact: true }).fill('Fake');
  await dialog.getByLabel('Base URL').fill(process.env.ASSAY_E2E_FAKE_URL!);
  await dialog.getByRole('button', { name: 'Add and test' }).click();
  await page.getByRole('dialog', { name: 'Provider added' }).getByRole('button', { name: 'Done' }).click();
  await tabs.getByRole('link', { name: 'Models' }).click();
}

/** On the Models tab: adds a model of the "Fake" provider at $0.15 / $0.60 per 1M tokens. */
export async function addFakeModel(page: Page, name: string, modelId: string) {
  await page.getByRole('button', { name: 'Add model' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add model' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  const fakeOption = dialog.getByLabel('Provider', { exact: true }).locator('option', { hasText: /^Fake — / });
  await dialog.getByLabel('Provider', { exact: true }).selectOption((await fakeOption.getAttribute('value'))!);
  await dialog.getByLabel('Model id').fill(modelId);
  await dialog.getByLabel('Input price ($ per 1M tokens)').fill('0.15');
  await dialog.getByLabel('Output price ($ per 1M tokens)').fill('0.6');
  await dialog.getByRole('button', { name: 'Add model' }).click();
  await expect(dialog).toBeHidden();
}
