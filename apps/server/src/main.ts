// The top floor: builds the runtime (the composition root) and serves every generation on one port.
import { createRuntime, listeningLine, loadConfig, seedDemoIfEmpty, serve, startFailure } from '@tollgate/runtime';
import { createServerApp, createServerHttp } from './app';
import { pricingPageLink } from '@tollgate/app-v1';

async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await createRuntime(config, { lockAs: 'tollgate server' });
  // The demo organisation (and its full-scope keys, printed) only on the embedded database: a
  // PostgreSQL server is a real deployment, which starts empty.
  const demo = config.databaseUrl ? undefined : await seedDemoIfEmpty(runtime.core);
  if (config.databaseUrl && !(await runtime.core.apiKeys.anyOrganisation()))
    console.log('An empty database: create the first organisation with `npx tollgate orgs create NAME` (docs/quickstart.md).');
  if (demo) {
    console.log('');
    console.log('Demo organisation "demo" created with the sample catalog (live and test).');
    console.log(`  live API key (shown once): ${demo.liveKey.plaintext}`);
    console.log(`  test API key (shown once): ${demo.testKey.plaintext}`);
    console.log(`  try: curl -H "x-api-key: ${demo.testKey.plaintext}" ${config.publicUrl}/products`);
    console.log('');
  }
  // A fresh install links the demo's hosted pricing table (test mode: sandbox payments) from `GET /`.
  const demoTable = demo && Object.entries(demo.test.keys).find(([k]) => k.startsWith('pricingTables.'))?.[1];
  const demoPricingPage = demoTable
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
  if (demoPricingPage) console.log(`Demo pricing page (sandbox payments): ${demoPricingPage}`);
  const app = createServerApp({ ...runtime, demoPricingPage });
  serve(runtime, createServerHttp(app, config.http), (port) => {
    console.log(listeningLine('Tollgate', config, port));
    console.log(`  legacy:  ${config.publicUrl}/products            (x-api-key)`);
    console.log(`  v1:      ${config.publicUrl}/products            (x-api-key, version: v1)`);
    console.log(`  catalog: ${config.publicUrl}/api/products        (Authorization: Bearer)`);
  });
}

main().catch((e) => {
  console.error(startFailure(e));
  process.exit(1);
});
