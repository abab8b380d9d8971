import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, indexRowsThatFit, loadConfig, startFailure } from '../src';

// One parent directory for the test's data directories, removed afterwards.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-config-'));
const tmp = () => fs.mkdtempSync(path.join(root, 'case-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('configuration', () => {
  it('defaults to PGlite in ./data with a secret generated once and kept', () => {
    const dir = tmp();
    const a = loadConfig({ DATA_DIR: dir });
    expect(a).toMatchObject({ port: 3000, publicUrl: 'http://localhost:3000', databaseUrl: undefined, signer: 'ecdsa', runWorker: true });
    expect(a.masterSecret).toHaveLength(64);
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toBe(a.masterSecret);
    expect(fs.statSync(path.join(dir, 'secret')).mode & 0o777).toBe(0o600);
  });

  it('needs TOLLGATE_SECRET with a server, both Stripe variables or neither, and sane values', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x/y' })).toThrow(ConfigError);
    expect(loadConfig({ DATABASE_URL: 'postgres://x/y', TOLLGATE_SECRET: 'a-long-enough-secret' }).databaseUrl).toBe('postgres://x/y');
    expect(() => loadConfig({ DATA_DIR: tmp(), STRIPE_SECRET_KEY: 'sk_test_1' })).toThrow(
      /both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/,
    );
    expect(() => loadConfig({ DATA_DIR: tmp(), SIGNER: 'rsa' })).toThrow(/SIGNER/);
    expect(() => loadConfig({ DATA_DIR: tmp(), PORT: 'eighty' })).toThrow(/PORT/);
    expect(loadConfig({ DATA_DIR: tmp() }).usageLedgerRetentionMonths).toBe(0);
    expect(loadConfig({ DATA_DIR: tmp(), USAGE_LEDGER_RETENTION_MONTHS: '13' }).usageLedgerRetentionMonths).toBe(13);
    expect(() => loadConfig({ DATA_DIR: tmp(), USAGE_LEDGER_RETENTION_MONTHS: '-1' })).toThrow(/USAGE_LEDGER_RETENTION_MONTHS/);
    expect(loadConfig({ DATA_DIR: tmp() }).usageMeterWindowSeconds).toBe(60);
    expect(loadConfig({ DATA_DIR: tmp(), USAGE_METER_WINDOW_SECONDS: '0' }).usageMeterWindowSeconds).toBe(0);
    expect(() => loadConfig({ DATA_DIR: tmp(), USAGE_METER_WINDOW_SECONDS: 'soon' })).toThrow(/USAGE_METER_WINDOW_SECONDS/);
    expect(loadConfig({ DATA_DIR: tmp() }).usageEventWindowSeconds).toBe(60);
    expect(loadConfig({ DATA_DIR: tmp(), USAGE_EVENT_WINDOW_SECONDS: '0' }).usageEventWindowSeconds).toBe(0);
    expect(() => loadConfig({ DATA_DIR: tmp(), USAGE_EVENT_WINDOW_SECONDS: '3601' })).toThrow(/USAGE_EVENT_WINDOW_SECONDS/);
    expect(() => loadConfig({ DATA_DIR: tmp(), TOLLGATE_SECRET: 'short' })).toThrow(/16 characters/);
    expect(loadConfig({ DATA_DIR: tmp(), PUBLIC_URL: 'https://billing.example.com/', SIGNER: 'HMAC' })).toMatchObject({
      publicUrl: 'https://billing.example.com',
      signer: 'hmac',
    });
  });

  it('reports every bad variable at once, one message each, and touches nothing on disk then', () => {
    const dir = path.join(tmp(), 'never-created');
    let error: unknown;
    try {
      loadConfig({
        DATA_DIR: dir,
        PORT: '70000',
        SIGNER: 'rsa',
        LOG_LEVEL: 'loud',
        RUN_WORKER: 'yes',
        MAX_SEATS: '0',
        DATABASE_READ_URL: 'postgres://replica/db',
        PUBLIC_URL: 'billing.example.com',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(7);
    for (const name of ['PORT', 'SIGNER', 'LOG_LEVEL', 'RUN_WORKER', 'MAX_SEATS', 'DATABASE_READ_URL', 'PUBLIC_URL']) {
      expect(problems.filter((p) => p.startsWith(name))).toHaveLength(1);
    }
    expect(startFailure(error).split('\n')).toEqual(problems.map((p) => `configuration error: ${p}`));
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('never prints a database password in a message', () => {
    expect(() =>
      loadConfig({ DATA_DIR: tmp(), DATABASE_URL: 'mysql://admin:hunter2@db/x', TOLLGATE_SECRET: 'long enough secret!' }),
    ).toThrow(/DATABASE_URL must be a postgres or postgresql URL, got mysql:\/\/admin:\*\*\*@db\/x$/);
  });

  it('takes LOG_LEVEL and the metrics token', () => {
    expect(loadConfig({ DATA_DIR: tmp(), LOG_LEVEL: 'DEBUG', METRICS_TOKEN: 'scrape' })).toMatchObject({
      logLevel: 'debug',
      metricsToken: 'scrape',
    });
    expect(loadConfig({ DATA_DIR: tmp() }).logLevel).toBe('info');
  });

  it('reads TRUST_PROXY as the number of proxies in front (true: one), refusing anything else', () => {
    const proxies = (v?: string) => loadConfig({ DATA_DIR: tmp(), TRUST_PROXY: v }).rateLimits.trustProxy;
    expect([proxies(), proxies('false'), proxies('true'), proxies('2'), proxies('0')]).toEqual([0, 0, 1, 2, 0]);
    expect(() => loadConfig({ DATA_DIR: tmp(), TRUST_PROXY: 'yes' })).toThrow(
      'TRUST_PROXY must be true, false or the number of proxies in front (0 to 10), got yes',
    );
  });

  it('takes a short EVENT_LEASE_SECONDS for queued changes, warning in one line that webhook deliveries are leased longer', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      expect(loadConfig({ DATA_DIR: tmp() }).eventLeaseSeconds).toBe(120);
      expect(loadConfig({ DATA_DIR: tmp(), EVENT_LEASE_SECONDS: '15' }).eventLeaseSeconds).toBe(15);
      expect(warn).not.toHaveBeenCalled();
      expect(loadConfig({ DATA_DIR: tmp(), EVENT_LEASE_SECONDS: '3' }).eventLeaseSeconds).toBe(3);
      expect(warn).toHaveBeenCalledTimes(1);
      const [line] = warn.mock.calls[0] as [string];
      expect(line).toMatch(/^EVENT_LEASE_SECONDS=3 is below the 15 s a webhook delivery needs .*webhook deliveries are leased for 15 s/);
      expect(line).not.toContain('\n');
      expect(() => loadConfig({ DATA_DIR: tmp(), EVENT_LEASE_SECONDS: '0' })).toThrow(/EVENT_LEASE_SECONDS must be a whole number from 1/);
    } finally {
      warn.mockRestore();
    }
  });

  it('keeps .env.example in step with compose.yaml: every variable compose reads is there', () => {
    const root = path.join(__dirname, '..', '..', '..');
    const compose = fs.readFileSync(path.join(root, 'compose.yaml'), 'utf8');
    const example = fs.readFileSync(path.join(root, '.env.example'), 'utf8');
    const used = new Set([...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
    expect(used).toContain('POSTGRES_PASSWORD');
    for (const name of used) expect({ name, inExample: new RegExp(`^# ${name}=`, 'm').test(example) }).toEqual({ name, inExample: true });
    // compose runs its instances behind nginx: they must trust it for client addresses.
    expect(compose).toMatch(/TRUST_PROXY: '1'/);
  });

  it('documents every variable it reads, in docs/configuration.md and .env.example', () => {
    const root = path.join(__dirname, '..', '..', '..');
    const source = fs.readFileSync(path.join(__dirname, '..', 'src', 'config.ts'), 'utf8');
    const read = new Set([...source.matchAll(/(?:env\.|env\[|(?:whole|choice|text|url|flag)\(')([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThan(15);
    const docs = fs.readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8');
    const example = fs.readFileSync(path.join(root, '.env.example'), 'utf8');
    for (const name of read) {
      expect({ name, documented: docs.includes(`\`${name}\``) }).toEqual({ name, documented: true });
      expect({ name, inExample: new RegExp(`^# ${name}=`, 'm').test(example) }).toEqual({ name, inExample: true });
    }
  });
});

describe('the heap ceiling', () => {
  const repo = path.join(__dirname, '..', '..', '..');
  const ceiling = (text: string) => /--max-old-space-size=(\d+)/.exec(text)?.[1];

  it("is one figure for npm start and the image, which a caller's NODE_OPTIONS overrides", () => {
    const dockerfile = fs.readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
    const start = (JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
      .start;
    const image = /^ENV NODE_OPTIONS=(.+)$/m.exec(dockerfile)?.[1] ?? '';
    expect(ceiling(image)).toBe('192');
    expect(ceiling(start)).toBe('192');
    // npm start puts the caller's NODE_OPTIONS after the default: the last flag wins.
    expect(start).toMatch(/NODE_OPTIONS="--max-old-space-size=192 \$NODE_OPTIONS"/);
  });

  it('holds the index of 1 000 000 licenses over 100 000 grantees, and bounds a larger index below it', () => {
    // --max-old-space-size=192 gives a heap limit of 240 MiB (old generation plus young).
    const rows = indexRowsThatFit(240 * 2 ** 20);
    expect(rows).toBeGreaterThanOrEqual(100_000);
    expect(rows).toBeLessThan(1_000_000);
    expect(indexRowsThatFit(4096 * 2 ** 20)).toBeGreaterThan(1_000_000);
  });
});
