import { assertOrganisationName } from '@tollgate/core';
import type { CommandModule } from '../command';
import { print } from '../support';

export const orgs: CommandModule = {
  register(program, { io, services }) {
    const orgs = program.command('orgs').description('create and list organisations (the vendors a Tollgate serves)');
    orgs
      .command('create')
      .description('create an organisation (nothing changes if it exists)')
      .argument('<name>', 'the organisation name, as --org and catalog files give it')
      .option('--json', 'print {id, name, created} as JSON')
      .action(async (name: string, o: { json?: boolean }) => {
        // A name no organisation may have is refused before the database is opened (or made).
        assertOrganisationName(name);
        const { core } = await services();
        const existed = await core.apiKeys.organisation(name).then(
          () => true,
          () => false,
        );
        const org = await core.apiKeys.ensureOrganisation(name);
        print(io, o.json, { id: org.id, name: org.name, created: !existed }, (r) => [
          `${r.created ? 'created' : 'already exists:'} organisation ${r.name} (${r.id})`,
        ]);
      });
    orgs
      .command('list')
      .description('list the organisations')
      .option('--json', 'print JSON')
      .action(async (o: { json?: boolean }) => {
        const { core } = await services();
        const rows = (await core.apiKeys.organisations()).map((x) => ({ id: x.id, name: x.name, createdAt: x.createdAt.toISOString() }));
        print(io, o.json, rows, (rs) =>
          rs.length ? rs.map((r) => `${r.name}  ${r.id}  created ${r.createdAt}`) : ['no organisations yet'],
        );
      });
  },
};
