// Browser tests drive Chromium with playwright-core. The browser comes from the npm registry
// (@sparticuz/chromium ships a compressed build and unpacks it to the temp directory on first use),
// so a fresh machine needs nothing installed by hand. Unpacked once here, before the test workers
// start, so parallel test files never race on it; CHROMIUM_PATH overrides (e.g. /usr/bin/chromium).
module.exports = async function globalSetup() {
  if (process.env.CHROMIUM_PATH) return;
  const chromium = require('@sparticuz/chromium');
  process.env.CHROMIUM_PATH = await chromium.executablePath();
};
