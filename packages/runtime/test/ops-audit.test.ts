import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, listeningLine, loadConfig, lockDataDir, startFailure } from '../src';

// What the ops audit left in the configuration: an empty METRICS_TOKEN, a DATA_DIR that cannot be
// a directory, and the banner with PUBLIC_URL set.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-ops-'));
const tmp = () => fs.mkdtempSync(path.join(root, 'case-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('no ConfigError');
};

describe('METRICS_TOKEN', () => {
  it('set but blank is refused in one line naming it (it would leave /metrics open); unset leaves it open as documented', () => {
    for (const blank of ['', '  '])
      expect(problemsOf(() => loadConfig({ DATA_DIR: tmp(), METRICS_TOKEN: blank }))).toEqual([
        'METRICS_TOKEN is set but blank, which would leave /metrics open: give it a token, or leave it unset for an open /metrics',
      ]);
    expect(loadConfig({ DATA_DIR: tmp() }).metricsToken).toBeUndefined();
    expect(loadConfig({ DATA_DIR: tmp(), METRICS_TOKEN: 'scrape' }).metricsToken).toBe('scrape');
  });

  it('compose.yaml passes it on only when set (its `${METRICS_TOKEN:-}` gave every compose start a blank one)', () => {
    const compose = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'compose.yaml'), 'utf8');
    expect(compose).not.toMatch(/\$\{METRICS_TOKEN/);
    expect(compose).toMatch(/^ {4}METRICS_TOKEN:\n/m);
  });
});

describe('DATA_DIR', () => {
  it('under a file, or a file itself, is one configuration line naming DATA_DIR (config and lock alike)', () => {
    const file = path.join(tmp(), 'plain-file');
    fs.writeFileSync(file, 'x');
    const under = path.join(file, 'data');
    const problems = problemsOf(() => loadConfig({ DATA_DIR: under }));
    expect(problems).toEqual([`DATA_DIR ${under} cannot be used: ${file} is a file, not a directory`]);
    expect(problemsOf(() => loadConfig({ DATA_DIR: file }))).toEqual([
      `DATA_DIR ${file} cannot be used: ${file} is a file, not a directory`,
    ]);
    // With TOLLGATE_SECRET the configuration touches no disk: the lock is where it is found.
    expect(problemsOf(() => lockDataDir(under, 'test'))).toEqual(problems);
    let error: unknown;
    try {
      lockDataDir(under, 'test');
    } catch (e) {
      error = e;
    }
    expect(startFailure(error)).toBe(`configuration error: ${problems[0]}`);
  });

  it('makes missing parents one level at a time', () => {
    const deep = path.join(tmp(), 'a', 'b', 'data');
    const config = loadConfig({ DATA_DIR: deep });
    expect(config.dataDir).toBe(deep);
    expect(fs.existsSync(path.join(deep, 'secret'))).toBe(true);
  });

  it('under /proc is refused in one line, not a hang in Node recursive mkdir', () => {
    expect(problemsOf(() => loadConfig({ DATA_DIR: '/proc/tollgate-nowhere/data' }))).toEqual([
      'DATA_DIR /proc/tollgate-nowhere/data cannot be used: cannot create /proc/tollgate-nowhere: the file system does not allow a directory there (ENOENT)',
    ]);
  });
});

describe('the start-up banner', () => {
  const base = { port: 3000, publicUrl: 'http://localhost:3000', databaseUrl: undefined, dataDir: '/srv/data' };
  it('shows the local address, and PUBLIC_URL beside it when set', () => {
    expect(listeningLine('Tollgate', base, 3000)).toBe('Tollgate listening on http://localhost:3000 (embedded PGlite in /srv/data)');
    expect(listeningLine('Tollgate', { ...base, publicUrl: 'https://billing.example.com', databaseUrl: 'postgres://db/x' }, 3000)).toBe(
      'Tollgate listening on http://localhost:3000 (public URL https://billing.example.com; PostgreSQL server)',
    );
    // PORT=0: the port bound, not the 0 asked for.
    expect(listeningLine('tollgate v1', { ...base, port: 0, publicUrl: 'http://localhost:0' }, 41234)).toBe(
      'tollgate v1 listening on http://localhost:41234 (embedded PGlite in /srv/data)',
    );
  });
});
