import { CLIENT_SCOPES, isUuid } from '@tollgate/core';
import { CliError, type CommandModule } from '../command';
import { list, organisationFor, print } from '../support';

export const keys: CommandModule = {
  register(program, { io, services }) {
    const keys = program.command('keys').description("an organisation's API keys and signing key");
    keys
      .command('create')
      .description('create an API key (shown once, kept only as a hash)')
      .requiredOption('--org <name>', 'the organisation')
      .option('--scopes <a,b>', 'scopes, e.g. products:read,licenses:write (default: *; an empty list is refused)')
      .option('--client', 'the read-only scopes a client library needs (safe in a browser)')
      .option('--test', 'a test-mode key (test_...)')
      .option('--name <name>', 'a name to recognise the key by')
      .option('--create-org', 'create the organisation if it does not exist')
      .option('--json', 'print {id, key, scopes, test} as JSON')
      .action(
        async (o: {
          org: string;
          scopes?: string;
          client?: boolean;
          test?: boolean;
          name?: string;
          createOrg?: boolean;
          json?: boolean;
        }) => {
          if (o.client && o.scopes !== undefined)
            throw new CliError('--client sets the scopes itself; give --client or --scopes, not both', 2);
          // An empty --scopes is misuse, never "all scopes" (leave it out for the default, *).
          if (o.scopes !== undefined && list(o.scopes).length === 0)
            throw new CliError('--scopes names no scope (leave it out for *, or name some: products:read,licenses:write)', 2);
          const { core } = await services();
          await organisationFor(core, o.org, o.createOrg);
          const created = await core.apiKeys.create({
            organisation: o.org,
            name: o.name ?? (o.client ? 'client library' : undefined),
            scopes: o.client ? [...CLIENT_SCOPES] : list(o.scopes ?? '*'),
            isTest: !!o.test,
          });
          const { record } = created;
          print(io, o.json, { id: record.id, key: created.plaintext, scopes: record.scopes, test: record.isTest }, (r) => [
            `key ${r.id} for ${o.org} (${r.test ? 'test' : 'live'}; scopes ${r.scopes.join(',')})`,
            r.key,
            'store it now: it is shown once and kept only as a hash',
          ]);
        },
      );
    keys
      .command('list')
      .description("list an organisation's keys (never the keys themselves)")
      .requiredOption('--org <name>', 'the organisation')
      .option('--json', 'print JSON')
      .action(async (o: { org: string; json?: boolean }) => {
        const { core } = await services();
        await organisationFor(core, o.org, false);
        const rows = (await core.apiKeys.list(o.org)).map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          scopes: k.scopes,
          test: k.isTest,
          createdAt: k.createdAt.toISOString(),
          revokedAt: k.revokedAt?.toISOString() ?? null,
        }));
        print(io, o.json, rows, (rs) =>
          rs.map(
            (r) =>
              `${r.id}  ${r.prefix}…  ${r.test ? 'test' : 'live'}  ${r.scopes.join(',')}  ${r.revokedAt ? `revoked ${r.revokedAt}` : 'active'}`,
          ),
        );
      });
    keys
      .command('revoke')
      .description('revoke a key (it stops working on every instance at once)')
      .argument('<id>', 'the key id (tollgate keys list shows it)')
      .action(async (id: string) => {
        if (!isUuid(id)) throw new CliError(`${id} is not a key id: <id> is a UUID (tollgate keys list --org NAME shows them)`, 2);
        const revoked = await (await services()).core.apiKeys.revoke(id);
        io.out(`revoked ${revoked.id}`);
      });
    keys
      .command('signing')
      .description("print the organisation's public signing key of one mode (PEM; default live), and for HMAC its secret")
      .requiredOption('--org <name>', 'the organisation')
      .option('--test', 'the test-mode key (signs what test-mode API keys ask) instead of the live one')
      .option(
        '--rotate',
        "make a new signing key of the mode first (the old one keeps verifying until it expires; the other mode's key is untouched)",
      )
      .option('--create-org', 'create the organisation if it does not exist')
      .action(async (o: { org: string; test?: boolean; rotate?: boolean; createOrg?: boolean }) => {
        const { core } = await services();
        const org = await organisationFor(core, o.org, o.createOrg);
        const tenant = { organisationId: org.id, isTest: !!o.test };
        const signing = core.signing;
        if (o.rotate) await signing.rotate(tenant);
        const current = await signing.current(tenant);
        const pem = signing.publicKeyPem(current);
        if (pem) {
          io.out(pem.trim());
          io.out(`publicHash: ${current.publicKey}`);
        } else {
          io.out(`key id: ${current.id}`);
          io.out(`secret (hex): ${signing.reveal(current).toString('hex')}`);
        }
      });
  },
};
