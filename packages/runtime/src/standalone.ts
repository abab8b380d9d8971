import { createServer, type RequestListener } from 'node:http';
import type { Container } from 'inversify';
import type { Config } from './config';
import { ConfigError, loadConfig } from './config';
import { closeContainer, createContainer } from './container';

/** Runs one generation's app alone on its own port (apps' standalone entries), until SIGINT/SIGTERM. */
export function runStandalone(name: string, build: (container: Container) => RequestListener): void {
  const start = async () => {
    const config: Config = loadConfig();
    const container = await createContainer(config);
    const server = createServer(build(container)).listen(config.port, () => console.log(`tollgate ${name} listening on ${config.publicUrl}`));
    const stop = () => server.close(() => void closeContainer(container).then(() => process.exit(0)));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  };
  start().catch((e) => {
    console.error(e instanceof ConfigError ? `configuration error: ${e.message}` : e);
    process.exit(1);
  });
}
