/**
 * A real browser for the hosted pages: the system's Chromium driven by playwright-core, with a
 * phone-sized page that records every console error (CSP violations among them). Without
 * Chromium the browser suite is skipped, except under CI=true, where its absence fails the run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
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
      // Headless Chromium is the whole browser: every window it opens for a context also starts
      // the omnibox's popup, two WebUI renderers nobody sees. They cost more CPU than the pages
      // under test (dashboard-browser: 205 → 123 core-s).
      '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup',
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

/**
 * Console errors and uncaught page errors seen by `page`, e.g. "Refused to apply inline style …":
 * into the array returned, or, with `into`, into the array it returns at the time.
 */
export function watchConsole(page: Page, into?: () => string[]): string[] {
  const problems: string[] = [];
  const sink = into ?? (() => problems);
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning' || /Content Security Policy/i.test(msg.text())) {
      sink().push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
    }
  });
  page.on('pageerror', (err) => sink().push(`pageerror: ${err.message}`));
  return problems;
}

/**
 * Pages for visits, reused within their context: a new page starts a renderer process (about
 * 0.2 core-s), a navigation of an open one costs a third of that. `take` hands out a page of the
 * context that is done with (or a new one) and the console problems of this visit alone; `done`
 * keeps the page for the next visit instead of closing it.
 */
export class PagePool {
  private readonly idle = new Map<BrowserContext, Page[]>();
  private readonly visits = new WeakMap<Page, string[]>();

  async take(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
    let page = this.idle.get(context)?.pop();
    while (page?.isClosed()) page = this.idle.get(context)?.pop();
    if (!page) {
      const fresh = await context.newPage();
      watchConsole(fresh, () => this.visits.get(fresh) ?? []);
      page = fresh;
    }
    const problems: string[] = [];
    this.visits.set(page, problems);
    return { page, problems };
  }

  done(page: Page): void {
    if (page.isClosed()) return;
    const pages = this.idle.get(page.context()) ?? [];
    pages.push(page);
    this.idle.set(page.context(), pages);
  }
}

/** The states `screenshot` has checked with axe-core in this process, by name. */
const checked = new Set<string>();

/**
 * Checks the page with axe-core and, when SCREENSHOTS=1, saves a full-page screenshot of it as
 * test/artifacts/NAME.png for a person to look at: every state worth a picture is also checked for
 * accessibility. Without SCREENSHOTS=1 no picture is taken (nothing reads them but people). A state
 * is checked once per test file: a file that goes through the same states on each database (the
 * console's markup does not depend on it) checks them on the first, as its picture is one.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!checked.has(name)) await assertAccessible(page, name);
  checked.add(name);
  if (process.env.SCREENSHOTS !== '1') return;
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core (WCAG 2.x A and AA rules and best practices) on the page as it is and fails on any
 * serious or critical violation. axe is evaluated through the DevTools protocol, which the page's
 * Content-Security-Policy does not govern, so the pages need no exception for it.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<any> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return (
      result.violations as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]
    ).map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`),
    [],
    `${what}: axe-core finds no serious or critical violation`,
  );
}
