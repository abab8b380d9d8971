import { createServer, type RequestListener } from 'node:http';
import { loadConfig } from './config';
import { startFailure } from './start-failure';
import { createRuntime, type Runtime } from './container';

/** Runs one generation's app alone on its own port (apps' standalone entries), until SIGINT/SIGTERM. */
export function runStandalone(name: string, build: (runtime: Runtime) => RequestListener): void {
  const start = async () => {
    const runtime = await createRuntime(loadConfig());
    const server = createServer(build(runtime)).listen(runtime.config.port, () =>
      console.log(`tollgate ${name} listening on ${runtime.config.publicUrl}`),
    );
    const stop = () => server.close(() => void runtime.close().then(() => process.exit(0)));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  };
  start().catch((e) => {
    console.error(startFailure(e));
    process.exit(1);
  });
}
