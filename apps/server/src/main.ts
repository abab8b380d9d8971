import { createServer } from 'node:http';
import type { EventWorker, SubscriptionService } from '@tollgate/core';
import type { Logger } from '@tollgate/http';
import { BackgroundWork, closeContainer, ConfigError, createContainer, loadConfig, TOKENS, type WakeSignal } from '@tollgate/runtime';
import { createServerApp, type ServerGenerations } from './app';
import { generations } from './generations';
import { seedDemoIfEmpty } from './demo';

async function main(): Promise<void> {
  const config = loadConfig();
  const container = await createContainer(config);
  const demo = await seedDemoIfEmpty(container);
  if (demo) {
    console.log('');
    console.log('Demo organisation "demo" created with the sample catalog (live and test).');
    console.log(`  live API key (shown once): ${demo.liveKey.plaintext}`);
    console.log(`  test API key (shown once): ${demo.testKey.plaintext}`);
    console.log(`  try: curl -H "x-api-key: ${demo.testKey.plaintext}" ${config.publicUrl}/products`);
    console.log('');
  }
  const gens: ServerGenerations = generations(container);
  const app = createServerApp(container, gens);
  const logger = container.get<Logger>(TOKENS.Logger);
  const background = config.runWorker
    ? new BackgroundWork(container.get<EventWorker>(TOKENS.EventWorker), container.get<SubscriptionService>(TOKENS.Subscriptions), container.get<WakeSignal>(TOKENS.EventQueue), logger, config.workerIntervalMs)
    : undefined;
  background?.start();
  const server = createServer(app);
  server.listen(config.port, () => {
    console.log(`Tollgate listening on ${config.publicUrl} (${config.databaseUrl ? 'PostgreSQL server' : `embedded PGlite in ${config.dataDir}`})`);
    console.log(`  legacy:  ${config.publicUrl}/products            (x-api-key)`);
    console.log(`  v1:      ${config.publicUrl}/products            (x-api-key, version: v1)`);
    console.log(`  catalog: ${config.publicUrl}/api/products        (Authorization: Bearer)`);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close(async () => {
      await background?.stop();
      await closeContainer(container);
      process.exit(0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e instanceof ConfigError ? `configuration error: ${e.message}` : e);
  process.exit(1);
});
