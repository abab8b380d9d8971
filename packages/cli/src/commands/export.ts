import YAML from 'yaml';
import type { CommandModule } from '../command';

export const exportCommand: CommandModule = {
  register(program, { io, services }) {
    program
      .command('export')
      .description("write an organisation's catalog in the catalog-file format (YAML by default)")
      .requiredOption('--org <name>', 'the organisation')
      .option('--test', 'the test-mode catalog')
      .option('--json', 'JSON instead of YAML')
      .action(async (o: { org: string; test?: boolean; json?: boolean }) => {
        const file = await (await services()).core.exporter.export(o.org, !!o.test);
        io.out(o.json ? JSON.stringify(file, null, 2) : YAML.stringify(file).trimEnd());
      });
  },
};
