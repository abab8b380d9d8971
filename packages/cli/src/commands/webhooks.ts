import { isUuid, type Core, type Tenant } from '@tollgate/core';
import { CliError, type CommandModule } from '../command';
import { list, organisationFor, print } from '../support';

interface Scoped {
  org: string;
  test?: boolean;
  json?: boolean;
}

const tenantOf = async (core: Core, o: Scoped & { createOrg?: boolean }): Promise<Tenant> => ({
  organisationId: (await organisationFor(core, o.org, o.createOrg)).id,
  isTest: !!o.test,
});

export const webhooks: CommandModule = {
  register(program, { io, services }) {
    const webhooks = program.command('webhooks').description("an organisation's webhook endpoints");
    webhooks
      .command('create')
      .description('add a webhook endpoint (its signing secret is shown once)')
      .requiredOption('--org <name>', 'the organisation')
      .requiredOption('--url <url>', 'where events are POSTed (https)')
      .option('--events <a,b>', 'event types to send (default: all)')
      .option('--description <text>', 'what the endpoint is for')
      .option('--test', 'receive test-mode events')
      .option('--create-org', 'create the organisation if it does not exist')
      .option('--json', 'print {id, url, events, test, secret} as JSON')
      .action(async (o: Scoped & { url: string; events?: string; description?: string; createOrg?: boolean }) => {
        const { core } = await services();
        const tenant = await tenantOf(core, o);
        const { endpoint, secret } = await core.webhooks.create(tenant, {
          url: o.url,
          events: o.events ? list(o.events) : [],
          description: o.description ?? null,
        });
        print(io, o.json, { id: endpoint.id, url: endpoint.url, events: endpoint.events, test: endpoint.isTest, secret }, (r) => [
          `endpoint ${r.id} for ${o.org} (${r.test ? 'test' : 'live'}): ${r.url}`,
          `events: ${r.events.length ? r.events.join(',') : 'all'}`,
          `secret: ${r.secret}`,
          'store the secret now: it is shown once (receivers verify signatures with it)',
        ]);
      });
    webhooks
      .command('list')
      .description("list the organisation's endpoints")
      .requiredOption('--org <name>', 'the organisation')
      .option('--test', 'the test-mode endpoints')
      .option('--json', 'print JSON')
      .action(async (o: Scoped) => {
        const { core } = await services();
        const tenant = await tenantOf(core, o);
        const rows: { id: string; url: string; events: string[]; test: boolean; active: boolean }[] = [];
        for (let after: string | undefined, more = true; more;) {
          const page = await core.webhooks.list(tenant, { limit: 100, after });
          rows.push(...page.items.map((e) => ({ id: e.id, url: e.url, events: e.events, test: e.isTest, active: !e.disabledAt })));
          more = page.hasMore && !!page.nextCursor;
          after = page.nextCursor ?? undefined;
        }
        print(io, o.json, rows, (rs) =>
          rs.map(
            (r) =>
              `${r.id}  ${r.test ? 'test' : 'live'}  ${r.active ? 'active' : 'disabled'}  ${r.url}  ${r.events.join(',') || 'all events'}`,
          ),
        );
      });
    webhooks
      .command('delete')
      .description('delete an endpoint')
      .argument('<id>', 'the endpoint id')
      .requiredOption('--org <name>', 'the organisation')
      .option('--test', 'a test-mode endpoint')
      .action(async (id: string, o: Scoped) => {
        if (!isUuid(id))
          throw new CliError(`${id} is not an endpoint id: <id> is a UUID (tollgate webhooks list --org NAME shows them)`, 2);
        const { core } = await services();
        await core.webhooks.delete(await tenantOf(core, o), id);
        io.out(`deleted ${id}`);
      });
  },
};
