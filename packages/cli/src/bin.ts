#!/usr/bin/env node
// The top floor of the command line: runs one command, opening the runtime (the composition root)
// only when the command needs the database.
import { createRuntime, loadConfig, startFailure, type Runtime } from '@tollgate/runtime';
import { runCli } from './program';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  let runtime: Runtime | undefined;
  try {
    return await runCli(
      argv,
      async () =>
        // A command answers no checks: no in-memory index of every license to read at start.
        (runtime ??= await createRuntime(
          { ...loadConfig(), checkIndexMaxLicenses: 0 },
          {
            skipMigrations: argv[0] === 'migrate',
            // A command reads nothing from the read replica: an outage of it stops no operator.
            skipReplicaCheck: true,
            lockAs: ['tollgate', ...argv.filter((a) => !a.startsWith('-')).slice(0, 2)].join(' '),
            logger: { info: () => undefined, error: (m: string) => console.error(`tollgate: ${m}`) },
          },
        )),
      { out: (l) => console.log(l), err: (l) => console.error(l) },
    );
  } finally {
    await runtime?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(startFailure(e));
    process.exit(1);
  },
);
