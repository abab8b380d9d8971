import fs from 'node:fs';
import type { CatalogFile, GrantChange } from '@tollgate/core';
import { checkCatalogFile } from '../catalog-check';
import { CliError, type CommandModule } from '../command';
import { organisationFor } from '../support';

export const importCommand: CommandModule = {
  register(program, { io, services }) {
    program
      .command('import')
      .description('create or update the catalog described in a file (YAML or JSON; docs/catalog-file.md)')
      .argument('<file>', 'the catalog file')
      .option('--dry-run', 'check the file and show what would change, writing nothing')
      .option('--create-org', "create the file's organisation if it does not exist")
      .option('--json', 'print the file keys mapped to their ids as JSON (with --dry-run: the changes)')
      .action(async (file: string, o: { dryRun?: boolean; createOrg?: boolean; json?: boolean }) => {
        const doc = readCatalogFile(file);
        const { core } = await services();
        // A dry run may name an organisation still to be made: the import checks it the same way.
        if (o.dryRun && o.createOrg && !(await core.apiKeys.organisations()).some((x) => x.name === doc.organisation))
          throw new CliError(`a dry run does not create organisations: tollgate orgs create ${doc.organisation} first`);
        // --create-org makes the organisation in the import's transaction (a failed import leaves
        // none), by the rule of every new organisation's name.
        if (!o.createOrg) await organisationFor(core, doc.organisation, false);
        const result = await core.importer.apply(doc, { dryRun: o.dryRun, createOrganisation: o.createOrg });
        if (o.dryRun) {
          if (o.json) return io.out(JSON.stringify(result.changes));
          for (const c of result.changes)
            io.out(`would ${c.change === 'created' ? 'create' : 'update'} ${c.key}${c.grants ? `: ${grantsText(c.grants)}` : ''}`);
          io.out(
            `dry run of ${file}: ${result.created} to create, ${result.updated} to update, ${result.unchanged} unchanged; nothing written`,
          );
          return;
        }
        if (o.json) io.out(JSON.stringify(result.keys));
        else io.out(`imported ${file}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged`);
      });
  },
};

/**
 * What a plan's grants gain and lose, for the dry run: `capabilities +admin -export; features sso
 * true -> (none), projects 3 -> unlimited; 2 running subscriptions`.
 */
export function grantsText(g: GrantChange): string {
  const parts: string[] = [];
  const caps = [...g.capabilities.added.map((n) => `+${n}`), ...g.capabilities.removed.map((n) => `-${n}`)];
  if (caps.length) parts.push(`capabilities ${caps.join(' ')}`);
  const show = (v: string | null) => (v === null ? '(none)' : JSON.stringify(v));
  const features = Object.entries(g.features).map(([k, v]) => `${k} ${show(v.before)} -> ${show(v.after)}`);
  if (features.length) parts.push(`features ${features.join(', ')}`);
  parts.push(`${g.runningSubscriptions} running subscription${g.runningSubscriptions === 1 ? '' : 's'}`);
  return parts.join('; ');
}

/** The file, parsed and checked against the catalog-file schema; every problem is one line with its line number. */
function readCatalogFile(file: string): CatalogFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot be read (${code ?? (e as Error).message})`);
  }
  const { doc, problems } = checkCatalogFile(file, text);
  if (problems.length || !doc)
    throw new CliError(
      problems.map((p) => `${file}${p.line ? `:${p.line}` : ''}: ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\ntollgate: '),
    );
  return doc;
}
