import fs from 'node:fs';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { CLIENT_SCOPES, isDomainError, type CatalogFile, type Core } from '@tollgate/core';
import { setUpDemo } from '@tollgate/runtime';
import { creditsCommand, usageCommand, USAGE_COMMANDS } from './usage-commands';

export const USAGE = `usage: tollgate <command> [options]

commands:
  migrate                                   apply pending database migrations
  keys create --org NAME [--scopes a,b | --client] [--test] [--name N] [--json]
                                            create an API key (shown once); creates the organisation if new
  keys list --org NAME [--json]             list an organisation's keys (never the keys themselves)
  keys revoke ID                            revoke a key
  keys signing --org NAME [--rotate]        print the organisation's public signing key (PEM), and for HMAC its secret
  webhooks create --org NAME --url URL [--events a,b] [--description D] [--test] [--json]
                                            add a webhook endpoint (its secret is shown once)
  webhooks list --org NAME [--test] [--json]
                                            list the organisation's endpoints
  webhooks delete ID --org NAME [--test]    delete an endpoint
  import FILE [--json]                      create or update the catalog described in FILE (YAML or JSON)
  export --org NAME [--test] [--json]       write the organisation's catalog in the same format (YAML by default)
  demo                                      create the demo organisation, its catalog and two keys
${USAGE_COMMANDS}

environment: DATABASE_URL (PostgreSQL server; default: embedded PGlite in DATA_DIR, ./data),
             TOLLGATE_SECRET, SIGNER=ecdsa|hmac`;

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

/** Runs one command against an open runtime; returns the exit code. */
export async function runCli(argv: string[], services: CliServices, io: Io): Promise<number> {
  const { core } = services;
  const [command, sub, ...rest] = argv;
  try {
    switch (command) {
      case 'migrate': {
        const applied = await services.migrate();
        io.out(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
        return 0;
      }
      case 'keys':
        return await keys(sub, rest, core, io);
      case 'webhooks':
        return await webhooks(sub, rest, core, io);
      case 'usage':
        return await usageCommand(sub, rest, core, io);
      case 'credits':
        return await creditsCommand(sub, rest, core, io);
      case 'import':
        return await importFile(
          [sub, ...rest].filter((x) => x !== undefined),
          core,
          io,
        );
      case 'export': {
        const { values } = parseArgs({
          args: [sub, ...rest].filter((x) => x !== undefined),
          options: { org: { type: 'string' }, test: { type: 'boolean' }, json: { type: 'boolean' } },
        });
        if (!values.org) {
          io.err(`export needs --org\n${USAGE}`);
          return 2;
        }
        const file = await core.exporter.export(values.org, !!values.test);
        io.out(values.json ? JSON.stringify(file, null, 2) : YAML.stringify(file).trimEnd());
        return 0;
      }
      case 'demo': {
        const demo = await setUpDemo(core);
        io.out(`demo organisation "${demo.organisation}" ready`);
        io.out(`live key (shown once): ${demo.liveKey.plaintext}`);
        io.out(`test key (shown once): ${demo.testKey.plaintext}`);
        return 0;
      }
      case undefined:
      case 'help':
      case '--help':
        io.out(USAGE);
        return 0;
      default:
        io.err(`unknown command ${command}\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (isDomainError(e)) {
      io.err(`${e.code}: ${e.message}`);
      for (const d of e.details) io.err(`  ${d.property}: ${d.error}`);
      return 1;
    }
    if (
      (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      (e as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'
    ) {
      io.err(`${(e as Error).message}\n${USAGE}`);
      return 2;
    }
    throw e;
  }
}

async function keys(sub: string | undefined, argv: string[], core: Core, io: Io): Promise<number> {
  const { apiKeys } = core;
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      scopes: { type: 'string' },
      client: { type: 'boolean' },
      test: { type: 'boolean' },
      name: { type: 'string' },
      json: { type: 'boolean' },
      rotate: { type: 'boolean' },
    },
  });
  const needOrg = () => {
    if (!values.org) throw Object.assign(new Error('--org is required'), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
    return values.org;
  };
  switch (sub) {
    case 'create': {
      const org = needOrg();
      if (values.client && values.scopes)
        throw Object.assign(new Error('--client sets the scopes itself; give --client or --scopes, not both'), {
          code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
        });
      await apiKeys.ensureOrganisation(org);
      const created = await apiKeys.create({
        organisation: org,
        name: values.name ?? (values.client ? 'client library' : undefined),
        scopes: values.client ? [...CLIENT_SCOPES] : (values.scopes ?? '*').split(','),
        isTest: !!values.test,
      });
      if (values.json)
        io.out(
          JSON.stringify({ id: created.record.id, key: created.plaintext, scopes: created.record.scopes, test: created.record.isTest }),
        );
      else {
        io.out(
          `key ${created.record.id} for ${org} (${created.record.isTest ? 'test' : 'live'}; scopes ${created.record.scopes.join(',')})`,
        );
        io.out(`${created.plaintext}`);
        io.out('store it now: it is shown once and kept only as a hash');
      }
      return 0;
    }
    case 'list': {
      const list = await apiKeys.list(needOrg());
      const rows = list.map((k) => ({
        id: k.id,
        name: k.name,
        prefix: k.prefix,
        scopes: k.scopes,
        test: k.isTest,
        createdAt: k.createdAt.toISOString(),
        revokedAt: k.revokedAt?.toISOString() ?? null,
      }));
      if (values.json) io.out(JSON.stringify(rows));
      else
        for (const r of rows)
          io.out(
            `${r.id}  ${r.prefix}…  ${r.test ? 'test' : 'live'}  ${r.scopes.join(',')}  ${r.revokedAt ? `revoked ${r.revokedAt}` : 'active'}`,
          );
      return 0;
    }
    case 'revoke': {
      const id = positionals[0];
      if (!id) throw Object.assign(new Error('keys revoke needs the key id'), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });
      const revoked = await apiKeys.revoke(id);
      io.out(`revoked ${revoked.id}`);
      return 0;
    }
    case 'signing': {
      const org = await apiKeys.ensureOrganisation(needOrg());
      const signing = core.signing;
      if (values.rotate) await signing.rotate(org.id);
      const current = await signing.current(org.id);
      const pem = signing.publicKeyPem(current);
      if (pem) {
        io.out(pem.trim());
        io.out(`publicHash: ${current.publicKey}`);
      } else {
        io.out(`key id: ${current.id}`);
        io.out(`secret (hex): ${signing.reveal(current).toString('hex')}`);
      }
      return 0;
    }
    default:
      io.err(`unknown keys command ${sub ?? ''}\n${USAGE}`);
      return 2;
  }
}

const usageError = (message: string) => Object.assign(new Error(message), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });

async function webhooks(sub: string | undefined, argv: string[], core: Core, io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      test: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (!values.org) throw usageError('--org is required');
  const org = await core.apiKeys.organisation(values.org);
  const tenant = { organisationId: org.id, isTest: !!values.test };
  const mode = tenant.isTest ? 'test' : 'live';
  switch (sub) {
    case 'create': {
      if (!values.url) throw usageError('webhooks create needs --url');
      const { endpoint, secret } = await core.webhooks.create(tenant, {
        url: values.url,
        events: values.events ? values.events.split(',').map((e) => e.trim()) : [],
        description: values.description ?? null,
      });
      if (values.json)
        io.out(JSON.stringify({ id: endpoint.id, url: endpoint.url, events: endpoint.events, test: endpoint.isTest, secret }));
      else {
        io.out(`endpoint ${endpoint.id} for ${values.org} (${mode}): ${endpoint.url}`);
        io.out(`events: ${endpoint.events.length ? endpoint.events.join(',') : 'all'}`);
        io.out(`secret: ${secret}`);
        io.out('store the secret now: it is shown once (receivers verify signatures with it)');
      }
      return 0;
    }
    case 'list': {
      const rows: { id: string; url: string; events: string[]; test: boolean; active: boolean }[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await core.webhooks.list(tenant, { limit: 100, after });
        rows.push(...page.items.map((e) => ({ id: e.id, url: e.url, events: e.events, test: e.isTest, active: !e.disabledAt })));
        if (!page.hasMore || !page.nextCursor) break;
        after = page.nextCursor;
      }
      if (values.json) io.out(JSON.stringify(rows));
      else
        for (const r of rows)
          io.out(
            `${r.id}  ${r.test ? 'test' : 'live'}  ${r.active ? 'active' : 'disabled'}  ${r.url}  ${r.events.join(',') || 'all events'}`,
          );
      return 0;
    }
    case 'delete': {
      const id = positionals[0];
      if (!id) throw usageError('webhooks delete needs the endpoint id');
      await core.webhooks.delete(tenant, id);
      io.out(`deleted ${id}`);
      return 0;
    }
    default:
      io.err(`unknown webhooks command ${sub ?? ''}\n${USAGE}`);
      return 2;
  }
}

async function importFile(argv: string[], core: Core, io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const file = positionals[0];
  if (!file) {
    io.err(`import needs a file\n${USAGE}`);
    return 2;
  }
  const text = fs.readFileSync(file, 'utf8');
  let doc: CatalogFile;
  try {
    doc = (file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text)) as CatalogFile;
  } catch (e) {
    io.err(`${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(e as Error).message}`);
    return 1;
  }
  if (doc?.organisation) await core.apiKeys.ensureOrganisation(doc.organisation);
  const result = await core.importer.apply(doc);
  if (values.json) io.out(JSON.stringify(result.keys));
  else io.out(`imported ${file}: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged`);
  return 0;
}
