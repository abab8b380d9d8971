// Standalone entry: the v1 generation alone on its own port.
import { closeContainer, createContainer, loadConfig } from '@tollgate/runtime';
import { createV1App } from './app';

async function main() {
  const config = loadConfig();
  const container = await createContainer(config);
  const server = createV1App(container).listen(config.port, () => console.log(`tollgate v1 listening on ${config.publicUrl}`));
  const stop = () => server.close(() => void closeContainer(container).then(() => process.exit(0)));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
