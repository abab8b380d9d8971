// The top floor: builds the runtime (the composition root) and serves every generation on one port.
import { createRuntime, listeningLine, loadConfig, seedDemoIfEmpty, serve, startFailure } from '@tollgate/runtime';
import { createServerApp, createServerHttp } from './app';
import { pricingPageLink } from '@tollgate/app-v1';

async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await createRuntime(config, { lockAs: 'tollgate server' });
  // PUBLIC_URL unset is http://localhost:$PORT, which with PORT=0 (any free port) names no port
  // until the server is bound: the lines meaning this process's own address use the bound one.
  const portUnknown = config.port === 0 && config.publicUrl === 'http://localhost:0';
  const address = (port: number) => (portUnknown ? `http://localhost:${port}` : config.publicUrl);
  // The demo organisation (and its full-scope keys, printed) only on the embedded database: a
  // PostgreSQL server is a real deployment, which starts empty.
  const demo = config.databaseUrl ? undefined : await seedDemoIfEmpty(runtime.core);
  if (config.databaseUrl && !(await runtime.core.apiKeys.anyOrganisation()))
    console.log('An empty database: create the first organisation with `npx tollgate orgs create NAME` (docs/quickstart.md).');
  // The keys are printed at once (shown once: a server that then fails to bind has shown them).
  if (demo) {
    console.log('');
    console.log('Demo organisation "demo" created with the sample catalog (live and test).');
    console.log(`  live API key (shown once): ${demo.liveKey.plaintext}`);
    console.log(`  test API key (shown once): ${demo.testKey.plaintext}`);
    console.log('');
  }
  // A fresh install links the demo's hosted pricing table (test mode: sandbox payments) from `GET /`.
  // Its link, and the checkout pages it leads to, are built on PUBLIC_URL before the server is
  // bound: with no port known yet (PORT=0 without PUBLIC_URL) no link is made, rather than one to port 0.
  const demoTable = demo && Object.entries(demo.test.keys).find(([k]) => k.startsWith('pricingTables.'))?.[1];
  const demoPricingPage =
    demoTable && !portUnknown
      ? (
          await pricingPageLink(
            { ...runtime, queries: runtime.core.queries, checkout: runtime.core.checkout },
            { organisationId: demo.test.organisationId, isTest: true },
            demoTable,
            {
              member: 'demo@example.com',
              granteeId: 'demo-user',
              successUrl: `${config.publicUrl}/sandbox/thank-you`,
              cancelUrl: `${config.publicUrl}/`,
              changeQuantity: true,
            },
          ).catch(() => undefined)
        )?.url
      : undefined;
  const app = createServerApp({ ...runtime, demoPricingPage });
  serve(runtime, createServerHttp(app, config.http), (port) => {
    const at = address(port);
    console.log(listeningLine('Tollgate', config, port));
    console.log(`  legacy:  ${at}/products            (x-api-key)`);
    console.log(`  v1:      ${at}/products            (x-api-key, version: v1)`);
    console.log(`  catalog: ${at}/api/products        (Authorization: Bearer)`);
    if (demo) console.log(`  try:     curl -H "x-api-key: ${demo.testKey.plaintext}" ${at}/products`);
    if (demoPricingPage) console.log(`Demo pricing page (sandbox payments): ${demoPricingPage}`);
    else if (demoTable && portUnknown)
      console.log('Demo pricing page: not linked, as its links need an address: set PUBLIC_URL beside PORT=0');
  });
}

main().catch((e) => {
  console.error(startFailure(e));
  process.exit(1);
});
