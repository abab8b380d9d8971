import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { isDomainError } from '@tollgate/core';
import { startFailure } from '@tollgate/runtime';
import { COMMANDS } from './commands';
import { CliError, type CliServices, type CommandContext, type Io } from './command';

export { CliError, type CliServices, type CommandContext, type CommandModule, type Io } from './command';

/** The CLI's version: its package's. */
export const VERSION = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

/** The whole command tree; every command module adds its own commands. */
export function buildProgram(ctx: CommandContext): Command {
  const program = new Command('tollgate')
    .description('Tollgate: pricing, subscriptions, licensing and metering for software vendors')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (s) => ctx.io.out(s.trimEnd()),
      writeErr: (s) => ctx.io.err(s.trimEnd()),
    })
    .addHelpText(
      'after',
      `
environment: DATABASE_URL (a PostgreSQL server; default: the embedded database in DATA_DIR, ./data),
             TOLLGATE_SECRET, SIGNER=ecdsa|hmac (docs/configuration.md)
exit codes:  0 done, 1 failed, 2 misused (unknown command or option, missing argument)`,
    );
  for (const command of COMMANDS) command.register(program, ctx);
  // Subcommand groups (`keys`, `orgs`, ...) carry the same output and exit rules as the program.
  return program;
}

/**
 * Runs one command line (without `node tollgate`); returns the exit code. Everything that goes
 * wrong is one line on `err`: never a stack trace.
 */
export async function runCli(argv: string[], services: CliServices | (() => Promise<CliServices>), io: Io): Promise<number> {
  const open = typeof services === 'function' ? services : async () => services;
  const program = buildProgram({ io, services: open });
  if (argv.length === 0) {
    io.out(program.helpInformation().trimEnd());
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    return failure(e, io);
  }
}

function failure(e: unknown, io: Io): number {
  if (e instanceof CommanderError) {
    // Commander has printed its message (or the help or version asked for) already.
    return e.exitCode === 0 ? 0 : 2;
  }
  if (e instanceof CliError) {
    io.err(`tollgate: ${e.message}`);
    return e.exitCode;
  }
  if (isDomainError(e)) {
    io.err(`tollgate: ${domainLine(e.message, e.details)}`);
    return 1;
  }
  // The runtime's refusals (configuration, a locked database, an unreachable server): one line each.
  for (const line of startFailure(e).split('\n')) io.err(`tollgate: ${line.replace(/^cannot start: /, '')}`);
  return 1;
}

/**
 * A refusal of the core as one line (README: "Errors are one line"): its message, then each
 * offending input the message does not already name.
 */
export function domainLine(message: string, details: readonly { property: string; error: string }[]): string {
  // A detail that only repeats the message (`unknown scope x`, `scopes: unknown scope x`) adds nothing.
  const extra = details
    .filter((d) => d.error !== message)
    .map((d) => `${d.property}: ${d.error}`)
    .filter((d) => !message.includes(d));
  return [message, ...extra].join('; ');
}
