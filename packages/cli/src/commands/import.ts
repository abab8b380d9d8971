import fs from 'node:fs';
import type { CatalogFile } from '@tollgate/core';
import YAML from 'yaml';
import { CliError, type CommandModule } from '../program';
import { organisationFor } from '../support';

export const importCommand: CommandModule = {
  register(program, { io, services }) {
    program
      .command('import')
      .description('create or update the catalog described in a file (YAML or JSON; docs/catalog-file.md)')
      .argument('<file>', 'the catalog file')
      .option('--create-org', "create the file's organisation if it does not exist")
      .option('--json', 'print the file keys mapped to their ids as JSON')
      .action(async (file: string, o: { createOrg?: boolean; json?: boolean }) => {
        const doc = readCatalogFile(file);
        const { core } = await services();
        if (typeof doc?.organisation === 'string' && doc.organisation) await organisationFor(core, doc.organisation, o.createOrg);
        const result = await core.importer.apply(doc);
        if (o.json) io.out(JSON.stringify(result.keys));
        else io.out(`imported ${file}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged`);
      });
  },
};

function readCatalogFile(file: string): CatalogFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot be read (${code ?? (e as Error).message})`);
  }
  const json = file.endsWith('.json');
  try {
    return (json ? JSON.parse(text) : YAML.parse(text)) as CatalogFile;
  } catch (e) {
    throw new CliError(`${file} is not valid ${json ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`);
  }
}
