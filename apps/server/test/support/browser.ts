import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../../src';

/**
 * Headless Chromium for the browser tests. The executable is the one jest's global setup unpacked
 * from @sparticuz/chromium (or CHROMIUM_PATH). The flags keep it off the network: this machine's
 * closed network refuses Chromium's background connections.
 */
export function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the tests through jest (its global setup unpacks Chromium)');
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--no-zygote',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--font-render-hinting=none',
    ],
  });
}

/**
 * What the pages' Content-Security-Policy refused while a test ran (Chromium reports each refusal
 * on the console): the pages must work under their policy, so a test expects none.
 */
export function watchCsp(browser: Browser): { newPage(): Promise<Page>; violations: string[] } {
  const violations: string[] = [];
  return {
    violations,
    async newPage() {
      const page = await browser.newPage();
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(`${page.url()}: ${m.text()}`);
      });
      return page;
    },
  };
}

/** The combined server on a real port over a fresh test world with one seeded organisation, and a browser. */
export interface BrowserWorld {
  world: TestWorld;
  org: SeededOrg;
  server: Server;
  /** The server's address; the links it makes (checkout, pricing pages) carry it. */
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

export async function startBrowserWorld(organisation: string): Promise<BrowserWorld> {
  // The server listens first, so that the links it makes carry its address.
  let app: ReturnType<typeof createServerApp> | undefined = undefined;
  const server = createServer((req, res) => (app ? app(req, res) : res.writeHead(503).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const world = await createTestWorld({ config: { publicUrl: base } });
  const org = await seedOrganisation(world, organisation);
  app = createServerApp(world);
  const browser = await launchBrowser();
  return {
    world,
    org,
    server,
    base,
    browser,
    close: async () => {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
      await world.close();
    },
  };
}
