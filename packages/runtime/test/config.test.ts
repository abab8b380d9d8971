import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-config-'));

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
    expect(() => loadConfig({ DATA_DIR: tmp(), TOLLGATE_SECRET: 'short' })).toThrow(/16 characters/);
    expect(loadConfig({ DATA_DIR: tmp(), PUBLIC_URL: 'https://billing.example.com/', SIGNER: 'HMAC' })).toMatchObject({
      publicUrl: 'https://billing.example.com',
      signer: 'hmac',
    });
  });
});
