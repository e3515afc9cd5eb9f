/**
 * A real browser for the hosted pages: the system's Chromium driven by playwright-core, with a
 * phone-sized page that records every console error (CSP violations among them). Without
 * Chromium the browser suite is skipped, except under CI=true, where its absence fails the run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './process.ts';

export const CHROMIUM = '/usr/bin/chromium';

/** Screenshots go here (git-ignored). */
export const ARTIFACTS = path.join(ROOT, 'test/artifacts');

/** Why the browser suite is skipped, or false when it runs. Throws under CI=true when it would skip. */
export function chromiumSkip(): string | false {
  if (fs.existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`CI=true but Chromium is not installed at ${CHROMIUM}`);
  return `Chromium is not installed at ${CHROMIUM}`;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
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
  });
}

/** A phone: 390×844 CSS pixels (a common Android/iPhone size), touch, mobile layout. */
export function phoneContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-IN',
  });
}

/** Console errors and uncaught page errors seen by `page`, e.g. "Refused to apply inline style …". */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning' || /Content Security Policy/i.test(msg.text())) {
      problems.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
    }
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  return problems;
}

/** Saves a full-page screenshot as test/artifacts/NAME.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
