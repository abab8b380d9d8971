import type { Command } from 'commander';
import type { Core } from '@tollgate/core';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** What the commands run on: the use cases, and the database's own migrations. */
export interface CliServices {
  core: Core;
  /** Applies pending migrations; the names applied. */
  migrate(): Promise<string[]>;
}

/**
 * What one command module is given: where to print, and the services, opened on first use (so
 * `--help` and `--version` never open the database or take its lock).
 */
export interface CommandContext {
  io: Io;
  services(): Promise<CliServices>;
}

/** One command (or group of subcommands) of `tollgate`: a module of `src/commands`, listed in its index. */
export interface CommandModule {
  register(program: Command, ctx: CommandContext): void;
}

/** A failure the person at the terminal can act on: one line, and the exit code (1 failed, 2 misused). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
