import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, listeningLine, loadConfig, lockDataDir, redactDatabaseUrl, startFailure } from '../src';

// What the ops audit left in the configuration: an empty METRICS_TOKEN, a DATA_DIR that cannot be
// a directory, and the banner with PUBLIC_URL set.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-ops-'));
const tmp = () => fs.mkdtempSync(path.join(root, 'case-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => jest.restoreAllMocks());

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

describe('compose.yaml', () => {
  const repo = path.join(__dirname, '..', '..', '..');
  it('passes what .env sets on to the instances (Stripe keys left in .env gave a public deployment the sandbox checkout), on the port nginx reaches', () => {
    const compose = fs.readFileSync(path.join(repo, 'compose.yaml'), 'utf8');
    const tollgate = compose.slice(compose.indexOf('x-tollgate:'), compose.indexOf('\nservices:'));
    expect(tollgate).toMatch(/^ {2}env_file:\n {4}- path: \.env\n {6}required: false\n/m);
    expect(tollgate).toMatch(/^ {4}PORT: '3000'\n/m);
    const nginx = fs.readFileSync(path.join(repo, 'deploy', 'nginx.conf'), 'utf8');
    expect([...nginx.matchAll(/server (tollgate-\d):(\d+)/g)].map((m) => m[2])).toEqual(['3000', '3000']);
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

describe('DATA_DIR review follow-ups', () => {
  it('a symbolic link to nothing is one line naming DATA_DIR, not a raw ENOENT', () => {
    const dir = tmp();
    const link = path.join(dir, 'data');
    fs.symlinkSync(path.join(dir, 'nowhere'), link);
    const line = `DATA_DIR ${link} cannot be used: ${link} is a symbolic link to nothing (${path.join(dir, 'nowhere')} does not exist)`;
    expect(problemsOf(() => loadConfig({ DATA_DIR: link }))).toEqual([line]);
    expect(problemsOf(() => lockDataDir(link, 'test'))).toEqual([line]);
    // Beneath it, too: the walk up names the link.
    const under = path.join(link, 'sub');
    expect(problemsOf(() => loadConfig({ DATA_DIR: under }))).toEqual([line.replace(`DATA_DIR ${link} `, `DATA_DIR ${under} `)]);
  });

  it('empty counts as unset (./data), not the current directory', () => {
    const config = loadConfig({ DATA_DIR: '', TOLLGATE_SECRET: 'sixteen characters at least' });
    expect(config.dataDir).toBe(path.resolve('data'));
  });
});

describe('the stored master secret (DATA_DIR/secret)', () => {
  const refusal = (file: string, holds: string) =>
    `DATA_DIR ${path.dirname(file)} cannot be used: ${file} holds ${holds}, not a master secret (16 at least): restore it from a backup, or set TOLLGATE_SECRET; if no database was started in this directory, delete the file and a new secret is made`;

  it('is generated once, 64 hex characters, readable by its owner only', () => {
    const dir = tmp();
    const secret = loadConfig({ DATA_DIR: dir }).masterSecret;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toBe(secret);
    expect(fs.statSync(path.join(dir, 'secret')).mode & 0o777).toBe(0o600);
    // Nothing else is left beside it.
    expect(fs.readdirSync(dir)).toEqual(['secret']);
  });

  it('an empty or short one is refused in one line naming the file and what to do, never used', () => {
    const dir = tmp();
    const file = path.join(dir, 'secret');
    // Written long ago (a fresh one may be being written: read again for a second, below).
    const stored = (text: string) => {
      fs.writeFileSync(file, text);
      fs.utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    };
    stored('');
    expect(problemsOf(() => loadConfig({ DATA_DIR: dir }))).toEqual([refusal(file, 'nothing')]);
    stored('  \n');
    expect(problemsOf(() => loadConfig({ DATA_DIR: dir }))).toEqual([refusal(file, 'nothing')]);
    stored('short secret\n');
    expect(problemsOf(() => loadConfig({ DATA_DIR: dir }))).toEqual([refusal(file, 'only 12 characters')]);
    // TOLLGATE_SECRET stands in for it.
    expect(loadConfig({ DATA_DIR: dir, TOLLGATE_SECRET: 'sixteen characters at least' }).masterSecret).toBe('sixteen characters at least');
  });

  it('a write that fails half-way (a full disk) leaves no empty secret for the next start', () => {
    const dir = tmp();
    // The file is made, nothing gets into it.
    jest.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    expect(problemsOf(() => loadConfig({ DATA_DIR: dir }))).toEqual([
      `DATA_DIR ${dir} cannot be used: cannot write ${path.join(dir, 'secret')}: no space left on the device (ENOSPC)`,
    ]);
    jest.restoreAllMocks();
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.readdirSync(dir)).toEqual(['secret']);
  });

  it("of two processes starting on a fresh directory, the second takes the first one's secret", () => {
    const dir = tmp();
    const file = path.join(dir, 'secret');
    const theirs = 'f'.repeat(64);
    const random = crypto.randomBytes;
    let raced = false;
    jest.spyOn(crypto, 'randomBytes').mockImplementation(((size: number) => {
      // The other process writes its secret between this one's look and its write.
      if (size === 32 && !raced) {
        raced = true;
        fs.writeFileSync(file, theirs, { mode: 0o600 });
      }
      return random(size);
    }) as typeof crypto.randomBytes);
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toBe(theirs);
    expect(raced).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
  });

  it('a file system without hard links gets the secret written in place', () => {
    const dir = tmp();
    jest.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    });
    const secret = loadConfig({ DATA_DIR: dir }).masterSecret;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.readFileSync(path.join(dir, 'secret'), 'utf8')).toBe(secret);
    expect(fs.readdirSync(dir)).toEqual(['secret']);
  });
});

describe('the stored master secret: second review', () => {
  /** Another process writes `text` into `file` after `seconds` (a process of its own: this one blocks meanwhile). */
  const writesLater = (file: string, text: string, seconds: number) =>
    spawn('sh', ['-c', `sleep ${seconds}; printf %s "$1" > "$0"`, file, text], { stdio: 'ignore' });

  it('is flushed to the disk before it is linked into place, and the directory after', () => {
    const dir = tmp();
    const file = path.join(dir, 'secret');
    const calls: string[] = [];
    const fds = new Map<number, string>();
    const name = (at: fs.PathLike) => (String(at) === dir ? 'dir' : String(at).startsWith(`${file}.`) ? 'temp' : String(at));
    const { openSync, writeSync, fsyncSync, closeSync, linkSync } = fs;
    jest.spyOn(fs, 'openSync').mockImplementation(((at: fs.PathLike, flags: string, mode?: number) => {
      const fd = openSync(at, flags, mode);
      fds.set(fd, name(at));
      calls.push(`open ${name(at)} ${flags}${mode === undefined ? '' : ` ${mode.toString(8)}`}`);
      return fd;
    }) as typeof fs.openSync);
    jest.spyOn(fs, 'writeSync').mockImplementation(((fd: number, ...rest: [Buffer, number, number]) => {
      calls.push(`write ${fds.get(fd)}`);
      return writeSync(fd, ...rest);
    }) as typeof fs.writeSync);
    jest.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
      calls.push(`fsync ${fds.get(fd)}`);
      fsyncSync(fd);
    });
    jest.spyOn(fs, 'closeSync').mockImplementation((fd) => {
      calls.push(`close ${fds.get(fd)}`);
      closeSync(fd);
    });
    jest.spyOn(fs, 'linkSync').mockImplementation((from, to) => {
      calls.push(`link ${name(from)} ${name(to)}`);
      linkSync(from, to);
    });
    const secret = loadConfig({ DATA_DIR: dir }).masterSecret;
    expect(calls).toEqual([
      'open temp wx 600',
      'write temp',
      'fsync temp',
      'close temp',
      `link temp ${file}`,
      'open dir r',
      'fsync dir',
      'close dir',
    ]);
    jest.restoreAllMocks();
    expect(fs.readFileSync(file, 'utf8')).toBe(secret);
    expect(fs.readdirSync(dir)).toEqual(['secret']);
  });

  it('without hard links, the loser of a race waits for the winner to finish writing', async () => {
    const dir = tmp();
    const file = path.join(dir, 'secret');
    const theirs = 'e'.repeat(64);
    jest.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    });
    const random = crypto.randomBytes;
    let child: ChildProcess | undefined;
    jest.spyOn(crypto, 'randomBytes').mockImplementation(((size: number) => {
      // The other process has made the file (empty) between this one's look and its write, and
      // writes its secret into it a moment later.
      if (size === 32 && !child) {
        fs.closeSync(fs.openSync(file, 'wx', 0o600));
        child = writesLater(file, theirs, 0.3);
      }
      return random(size);
    }) as typeof crypto.randomBytes);
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toBe(theirs);
    expect(child).toBeDefined();
    await new Promise((r) => child?.once('exit', r));
    expect(fs.readdirSync(dir)).toEqual(['secret']);
  });

  it('one being written this instant is read again; an empty one is still refused, after a second', async () => {
    const dir = tmp();
    const file = path.join(dir, 'secret');
    const theirs = 'd'.repeat(64);
    fs.writeFileSync(file, '');
    const child = writesLater(file, theirs, 0.3);
    expect(loadConfig({ DATA_DIR: dir }).masterSecret).toBe(theirs);
    await new Promise((r) => child.once('exit', r));

    fs.writeFileSync(file, '');
    const started = Date.now();
    expect(problemsOf(() => loadConfig({ DATA_DIR: dir }))[0]).toContain(`${file} holds nothing`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('temporary files a killed process left are removed at start: only that name, only older than a minute', () => {
    const dir = tmp();
    const old = new Date(Date.now() - 120_000);
    const leave = (name: string, when?: Date) => {
      fs.writeFileSync(path.join(dir, name), 'x');
      if (when) fs.utimesSync(path.join(dir, name), when, when);
    };
    leave('secret.123.0a1b2c3d.new', old);
    leave('secret.456.deadbeef.new', old);
    leave('secret.789.00112233.new'); // a process starting this instant: its own
    leave('secret.123.0a1b2c3d.new.bak', old);
    leave('secret.x.0a1b2c3d.new', old);
    leave('other.123.0a1b2c3d.new', old);
    fs.mkdirSync(path.join(dir, 'secret.1.00000000.new'));
    fs.utimesSync(path.join(dir, 'secret.1.00000000.new'), old, old);
    loadConfig({ DATA_DIR: dir });
    expect(fs.readdirSync(dir).sort()).toEqual(
      [
        'other.123.0a1b2c3d.new',
        'secret',
        'secret.1.00000000.new',
        'secret.123.0a1b2c3d.new.bak',
        'secret.789.00112233.new',
        'secret.x.0a1b2c3d.new',
      ].sort(),
    );
    // And with a secret already there.
    leave('secret.321.0a1b2c3d.new', old);
    loadConfig({ DATA_DIR: dir });
    expect(fs.existsSync(path.join(dir, 'secret.321.0a1b2c3d.new'))).toBe(false);
  });
});

describe('a database URL shown', () => {
  it('masks a password holding /, ?, #, @ or %40, and password parameters; the rest as given', () => {
    const cases: [string, string][] = [
      ['postgres://user:secret@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:pa/ss@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:12345/x@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:pa?ss@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:pa#ss@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:p@ss@host:5432/db', 'postgres://user:***@host:5432/db'],
      ['postgresql://user:pa%40ss@host/db', 'postgresql://user:***@host/db'],
      ['postgres://:secret@host/db', 'postgres://:***@host/db'],
      ['postgres://us/er:secret@host/db', 'postgres://***@host/db'],
      ['postgres://user@host/db?options=-c%20x%3Dy&PassWord=s', 'postgres://user@host/db?options=-c%20x%3Dy&PassWord=***'],
      ['postgres://host/db?password=a@b&sslmode=require', 'postgres://host/db?password=***&sslmode=require'],
      ['postgres://user:secret@/db?host=/var/run/postgresql', 'postgres://user:***@/db?host=/var/run/postgresql'],
      ['host=db user=u password=secret', '(not shown: not a URL, and it may hold a password)'],
      // Second review: a `#` in a password parameter, a password without a host, a fragment's parameter.
      ['postgres://host/db?password=se#cret', 'postgres://host/db?password=***'],
      ['postgres://host/db?password=se#cret&sslmode=require', 'postgres://host/db?password=***&sslmode=require'],
      ['postgres://user:secret', 'postgres://user:***'],
      ['postgres://user:pa/ss', 'postgres://user:***'],
      ['postgres://user:secret@host/db#pass=x', 'postgres://user:***@host/db#pass=***'],
      ['postgres://host/db#a=1&password=x', 'postgres://host/db#a=1&password=***'],
      // Hosts and ports are no password; the reviewer's other forms stay masked.
      ['postgres://host:5432/db', 'postgres://host:5432/db'],
      ['postgres://host:5432', 'postgres://host:5432'],
      ['postgres://[::1]:5432/db', 'postgres://[::1]:5432/db'],
      ['postgres://h1:5432,h2:5433/db?password=x', 'postgres://h1:5432,h2:5433/db?password=***'],
      ['postgres://u:p/x@h/db', 'postgres://u:***@h/db'],
      ['postgres://u:p@x@h/db', 'postgres://u:***@h/db'],
      ['postgres://u:p#q@h/db', 'postgres://u:***@h/db'],
      ['postgres:///db?host=/tmp&password=s3', 'postgres:///db?host=/tmp&password=***'],
      ['postgres://h/db?user=u&password=s&x=1', 'postgres://h/db?user=u&password=***&x=1'],
      ['postgres://u:p@h/db?options=-c%20x&sslpassword=zz', 'postgres://u:***@h/db?options=-c%20x&sslpassword=***'],
      ['postgres://u:sec\nret@h', 'postgres://u:***@h'],
      ['postgres://h/db?sslkey=/k&passfile=/p', 'postgres://h/db?sslkey=/k&passfile=***'],
      // `;`-separated and `pwd` parameters (JDBC-style URLs pasted into DATABASE_URL).
      ['postgres://h/db;password=s3', 'postgres://h/db;password=***'],
      ['postgres://h/db?user=u;pwd=s3&sslmode=require', 'postgres://h/db?user=u;pwd=***&sslmode=require'],
      ['postgres://h/db?PWD=s3', 'postgres://h/db?PWD=***'],
      ['postgres://:secret@h', 'postgres://:***@h'],
    ];
    for (const [raw, shown] of cases) expect([raw, redactDatabaseUrl(raw)]).toEqual([raw, shown]);
  });

  it('a DATABASE_URL that does not parse is refused without its password', () => {
    for (const [raw, shown] of [
      ['postgres://user:pa/ss@host/db', 'postgres://user:***@host/db'],
      ['postgres://user:pa#ss@host/db', 'postgres://user:***@host/db'],
      ['mysql://user:pa%40ss@host/db', 'mysql://user:***@host/db'],
      ['postgres://user:secret', 'postgres://user:***'],
      ['mysql://host/db?password=se#cret', 'mysql://host/db?password=***'],
    ])
      expect(problemsOf(() => loadConfig({ DATABASE_URL: raw, TOLLGATE_SECRET: 'sixteen characters at least' }))).toEqual([
        `DATABASE_URL must be a postgres or postgresql URL, got ${shown}`,
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
