#!/usr/bin/env node
import { closeContainer, ConfigError, createContainer, loadConfig } from '@tollgate/runtime';
import { runCli } from './cli';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const container = await createContainer(loadConfig(), { skipMigrations: argv[0] === 'migrate', logger: { info: () => undefined, error: (m, f) => console.error(m, f) } });
  try {
    return await runCli(argv, container, { out: (l) => console.log(l), err: (l) => console.error(l) });
  } finally {
    await closeContainer(container);
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof ConfigError ? e.message : e);
    process.exit(1);
  },
);
