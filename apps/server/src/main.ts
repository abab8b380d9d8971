// The top floor: builds the runtime (the composition root) and serves every generation on one port.
import { BackgroundWork, ConfigError, createRuntime, loadConfig, seedDemoIfEmpty } from '@tollgate/runtime';
import { createServerApp, createServerHttp } from './app';

async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await createRuntime(config);
  const demo = await seedDemoIfEmpty(runtime.core);
  if (demo) {
    console.log('');
    console.log('Demo organisation "demo" created with the sample catalog (live and test).');
    console.log(`  live API key (shown once): ${demo.liveKey.plaintext}`);
    console.log(`  test API key (shown once): ${demo.testKey.plaintext}`);
    console.log(`  try: curl -H "x-api-key: ${demo.testKey.plaintext}" ${config.publicUrl}/products`);
    console.log('');
  }
  const app = createServerApp(runtime);
  const background = config.runWorker
    ? new BackgroundWork(runtime.core.worker, runtime.core.sweeps, runtime.wake, runtime.logger, config.workerIntervalMs)
    : undefined;
  background?.start();
  const server = createServerHttp(app);
  server.listen(config.port, () => {
    console.log(
      `Tollgate listening on ${config.publicUrl} (${config.databaseUrl ? 'PostgreSQL server' : `embedded PGlite in ${config.dataDir}`})`,
    );
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
      await runtime.close();
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
