#!/usr/bin/env node
// The top floor of the command line: runs one command, opening the runtime (the composition root)
// only when the command needs the database.
import { startFailure, type Runtime } from '@tollgate/runtime';
import { openRuntime } from './open';
import { runCli } from './program';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const err = (l: string) => console.error(l);
  let runtime: Runtime | undefined;
  try {
    return await runCli(argv, async () => (runtime ??= await openRuntime(argv, process.env, err)), {
      out: (l) => console.log(l),
      err,
    });
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
