import type { Browser, Page } from 'playwright-core';

/** Where the browser tests find Chromium (`apt-get install chromium`); without it they are skipped. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless Chromium as every browser test runs it: no sandbox (containers), no GPU, no background traffic. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** On identity's sign-in page: types the username and password and submits the form. */
export async function submitSignIn(page: Page, username: string, password: string): Promise<void> {
  await page.fill('input[name=username]', username);
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
}
