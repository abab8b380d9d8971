import { chromium, type Browser } from 'playwright-core';

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
