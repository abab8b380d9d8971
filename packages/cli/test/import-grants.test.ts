import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

import { createTestWorld, purchase, seedOrganisation, type TestWorld } from '@tollgate/runtime/testing';
import { runCli } from '../src';

// `tollgate import --dry-run` lists every plan whose grants the file changes, with what the plan
// gains and loses and how many running subscriptions hold it; a plan the file does not name keeps
// its grants (an import never deletes a capability or feature).
let world: TestWorld;
let dir: string;
beforeAll(async () => {
  world = await createTestWorld();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-grants-'));
});
afterAll(async () => {
  await world?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, world, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

it("names each plan whose grants change, with what is added and removed, and the plan's running subscriptions", async () => {
  const org = await seedOrganisation(world, 'grants-org');
  await purchase(world, org.keys['plans.notes.team'], 'alice', 2);
  const exported = YAML.parse((await run('export', '--org', 'grants-org')).out);
  const [product] = exported.products;
  const team = product.plans.find((p: { key: string }) => p.key === 'team');
  // Team loses export and sso and gains admin; the product's list leaves sso out (it is kept).
  const file = path.join(dir, 'grants.yaml');
  const doc = {
    organisation: 'grants-org',
    products: [
      {
        key: 'notes',
        name: product.name,
        displayName: product.displayName,
        description: product.description,
        currencies: product.currencies,
        capabilities: ['edit', 'admin'],
        features: product.features.filter((f: { key: string }) => f.key !== 'sso'),
        plans: [{ ...team, capabilities: ['edit', 'admin'], features: { projects: 'unlimited', theme: 'dark' } }],
      },
    ],
  };
  fs.writeFileSync(file, YAML.stringify(doc));
  const dry = await run('import', file, '--dry-run');
  expect(dry.err).toBe('');
  expect(dry.out.split('\n')).toEqual([
    // The file's capabilities come first (edit, admin), then those it leaves out (export).
    'would update products.notes',
    'would update plans.notes.team: capabilities +admin -export; features sso "true" -> (none); 1 running subscription',
    `dry run of ${file}: 0 to create, 2 to update, 0 unchanged; nothing written`,
  ]);
});

it('shows the value a plan had before an enum feature becomes boolean', async () => {
  const org = await seedOrganisation(world, 'grants-enum');
  const exported = YAML.parse((await run('export', '--org', 'grants-enum')).out);
  const [product] = exported.products;
  // theme goes from enum (light, dark) to boolean; the plans holding a value of it are named.
  const plans = product.plans
    .filter((p: { features: Record<string, string> }) => 'theme' in p.features)
    .map((p: { features: Record<string, string> }) => ({
      ...p,
      features: { ...p.features, theme: p.features.theme === 'dark' ? 'true' : 'false' },
    }));
  const features = product.features.map((f: { key: string }) =>
    f.key === 'theme' ? { key: 'theme', displayName: 'Theme', valueType: 'boolean', defaultValue: 'false' } : f,
  );
  const file = path.join(dir, 'enum.yaml');
  fs.writeFileSync(file, YAML.stringify({ organisation: 'grants-enum', products: [{ ...product, features, plans, pricingTables: [] }] }));
  const dry = await run('import', file, '--dry-run');
  expect(dry.err).toBe('');
  expect(dry.out.split('\n').filter((l) => l.includes('features theme'))).toEqual([
    'would update plans.notes.free: features theme "light" -> "false"; 0 running subscriptions',
    'would update plans.notes.team: features theme "dark" -> "true"; 0 running subscriptions',
  ]);
  void org;
});
