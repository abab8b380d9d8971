import { isDomainError, type Core, type Organisation } from '@tollgate/core';
import { CliError } from './command';

/** Splits a comma-separated option (`--scopes a,b`), dropping empty parts. */
export const list = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The organisation a command acts on. A name not known is refused unless `--create-org` asks for
 * it: a misspelt `--org` must not quietly start a second organisation.
 */
export async function organisationFor(core: Core, name: string, createOrg: boolean | undefined): Promise<Organisation> {
  if (createOrg) return core.apiKeys.ensureOrganisation(name);
  try {
    return await core.apiKeys.organisation(name);
  } catch (e) {
    if (isDomainError(e) && e.code === 'ORGANISATION_NOT_FOUND')
      throw new CliError(`no organisation named ${name} (tollgate orgs list shows them; add --create-org to create it)`);
    throw e;
  }
}

/** Prints rows as JSON (`--json`) or as lines of text. */
export function print<T>(io: { out(l: string): void }, json: boolean | undefined, rows: T, lines: (rows: T) => string[]): void {
  if (json) io.out(JSON.stringify(rows));
  else for (const l of lines(rows)) io.out(l);
}
