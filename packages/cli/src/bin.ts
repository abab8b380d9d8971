#!/usr/bin/env node
// The top floor of the command line: builds the runtime (the composition root) and runs one command.
import { createRuntime, loadConfig, startFailure } from '@tollgate/runtime';
import { runCli } from './cli';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const runtime = await createRuntime(loadConfig(), {
    skipMigrations: argv[0] === 'migrate',
    logger: { info: () => undefined, error: (m: string, f?: object) => console.error(m, f) },
  });
  try {
    return await runCli(argv, runtime, { out: (l) => console.log(l), err: (l) => console.error(l) });
  } finally {
    await runtime.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(startFailure(e));
    process.exit(1);
  },
);
