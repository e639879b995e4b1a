/**
 * Test helper: open a self-contained HTML report in a real headless Chromium (Debian's package,
 * driven by playwright-core; no npm package downloads a browser) and watch what it does.
 *
 * Records console messages of type error, uncaught page errors, and every request whose URL is
 * not the page's own file:// URL (the report must make none). Requests other than the page's own
 * are aborted as well as counted, so nothing leaves the machine even when a page is broken.
 *
 * The browser: LLM_BENCH_CHROMIUM, else /usr/bin/chromium. Without one, `browserMissing` says why
 * and the browser tests skip, printing that reason — except under CI=true, where .ci/run installs
 * Chromium, so a missing one fails instead of hiding the tests.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const chromiumPath = process.env.LLM_BENCH_CHROMIUM || '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing: string | undefined = existsSync(chromiumPath)
  ? undefined
  : `no Chromium at ${chromiumPath} (install Debian's package: apt-get install -y chromium, or set LLM_BENCH_CHROMIUM)`;

/**
 * For a browser test file: true when its tests must skip (and prints why, once per file). Under
 * CI=true a missing browser is an error, not a skip.
 */
export function skipWithoutBrowser(what: string): boolean {
  if (!browserMissing) return false;
  if (process.env.CI === 'true') throw new Error(`${what}: ${browserMissing}; CI installs it (.ci/run), so this is a CI setup fault`);
  console.log(`[skipped] ${what}: ${browserMissing}`);
  return true;
}

/** Flags for a root, offline, headless machine: no sandbox (root), no background traffic. */
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

export interface OpenedPage {
  page: Page;
  /** the page's own URL (file://…, no fragment) */
  url: string;
  consoleErrors: string[];
  pageErrors: string[];
  /** every request whose URL is not `url` (with or without a fragment), aborted */
  requests: string[];
  /** elements matching a CSS selector */
  count(selector: string): Promise<number>;
  /** a full-page PNG (or of the first element matching `selector`), written to each path (folders created) */
  screenshot(paths: string[], selector?: string): Promise<Buffer>;
  close(): Promise<void>;
}

export interface ReportBrowser {
  browser: Browser;
  /**
   * Open an HTML file via file:// in a fresh context; resolves once its load event fired.
   * bypassCSP: ignore the page's Content-Security-Policy (to test escaping on its own).
   */
  open(file: string, options?: { bypassCSP?: boolean; width?: number; height?: number }): Promise<OpenedPage>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<ReportBrowser> {
  if (browserMissing) throw new Error(browserMissing);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    timeout: 60_000,
  });
  const contexts = new Set<BrowserContext>();
  return {
    browser,
    async open(file, options = {}) {
      const url = pathToFileURL(resolve(file)).href;
      const context = await browser.newContext({
        bypassCSP: options.bypassCSP ?? false,
        viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
        serviceWorkers: 'block',
      });
      contexts.add(context);
      const own = (u: string) => u.split('#')[0] === url;
      const consoleErrors: string[] = [];
      const pageErrors: string[] = [];
      const requests: string[] = [];
      // abort anything that is not the page itself (http(s), ws, data: images…): counted below
      await context.route(
        (u) => !own(u.href),
        (route) => route.abort('blockedbyclient'),
      );
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      page.on('pageerror', (e) => pageErrors.push(String(e?.message ?? e)));
      // the context's requests: the page's, its frames' and any popup's
      context.on('request', (r) => {
        if (!own(r.url())) requests.push(r.url());
      });
      await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
      return {
        page,
        url,
        consoleErrors,
        pageErrors,
        requests,
        count: (selector) => page.locator(selector).count(),
        async screenshot(paths, selector) {
          const png = selector ? await page.locator(selector).first().screenshot({ type: 'png' }) : await page.screenshot({ fullPage: true, type: 'png' });
          for (const p of paths) {
            mkdirSync(dirname(p), { recursive: true });
            writeFileSync(p, png);
          }
          return png;
        },
        async close() {
          contexts.delete(context);
          await context.close();
        },
      };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close();
    },
  };
}

/** The problems a page showed: console errors, page errors, requests. Empty when clean. */
export function pageProblems(p: OpenedPage): string[] {
  return [
    ...p.consoleErrors.map((t) => `console error: ${t}`),
    ...p.pageErrors.map((t) => `page error: ${t}`),
    ...p.requests.map((u) => `request: ${u}`),
  ];
}

/** The folder screenshots always go to (overwritten by each run, kept after it). */
export const SCREENSHOT_DIR = join(tmpdir(), 'llm-speed-matrix-screenshots');

/**
 * Where a test writes a screenshot: SCREENSHOT_DIR, and LLM_BENCH_SCREENSHOTS too when set (e.g.
 * docs/, for a picture of the page in the README).
 */
export function screenshotPaths(name: string): string[] {
  const paths = [join(SCREENSHOT_DIR, name)];
  const extra = process.env.LLM_BENCH_SCREENSHOTS;
  if (extra) paths.push(join(resolve(extra), name));
  return paths;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
