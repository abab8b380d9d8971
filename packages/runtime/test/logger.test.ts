import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createLogger, LOG_SECRET_FIELDS, redactionFree } from '../src';

/** A pino destination that keeps each line. */
function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('the logger (pino)', () => {
  it('writes one JSON line per message with its level name, message and fields', () => {
    const out = capture();
    const log = createLogger('info', out.stream);
    log.info('request', { requestId: 'r-1', method: 'GET', path: '/products', status: 200, ms: 1.5 });
    log.error('stripe webhook failed', { requestId: 'r-2' });
    expect(out.lines()).toEqual([
      expect.objectContaining({ level: 'info', msg: 'request', requestId: 'r-1', method: 'GET', path: '/products', status: 200 }),
      expect.objectContaining({ level: 'error', msg: 'stripe webhook failed', requestId: 'r-2' }),
    ]);
    expect(out.lines()[0].time).toEqual(expect.any(Number));
  });

  it('censors keys, secrets and tokens wherever they appear in the fields', () => {
    const out = capture();
    createLogger('info', out.stream).info('oops', {
      apiKey: 'live_abc',
      headers: { authorization: 'Bearer live_abc', 'x-api-key': 'live_abc' },
      nested: { deeper: { secret: 'whsec_1' } },
      keep: 'visible',
    });
    const [line] = out.lines();
    expect(JSON.stringify(line)).not.toContain('live_abc');
    expect(JSON.stringify(line)).not.toContain('whsec_1');
    expect(line).toMatchObject({ apiKey: '[redacted]', keep: 'visible', headers: { authorization: '[redacted]' } });
  });

  it('drops messages below LOG_LEVEL', () => {
    const out = capture();
    const log = createLogger('error', out.stream);
    log.info('not shown');
    log.error('shown');
    expect(out.lines().map((l) => l.msg)).toEqual(['shown']);
  });
});

describe('the logger without redaction work on plain fields', () => {
  /** What the logger wrote before issue 22: every line through pino's wildcard redaction. */
  function redactingEverything(stream: Writable) {
    const paths = LOG_SECRET_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`, `*.*["${f}"]`]);
    const log = pino(
      {
        level: 'info',
        base: undefined,
        formatters: { level: (label: string) => ({ level: label }) },
        redact: { paths, censor: '[redacted]' },
      },
      stream,
    );
    return { info: (m: string, f: Record<string, unknown>) => log.info(f, m) };
  }
  const withoutTime = (l: Record<string, unknown>) => JSON.stringify({ ...l, time: 0 });

  it('writes the same bytes as redaction would for every kind of field set (time aside)', () => {
    const samples: Record<string, unknown>[] = [
      { requestId: 'r-1', method: 'GET', path: '/licenses/check', status: 200, ms: 0.123 },
      { requestId: 'r-"quoted"\n', method: 'POST', path: '/x?y=1', status: 500, ms: 12 },
      { apiKey: 'live_secret', requestId: 'r-2' },
      { key: 'live_secret', ok: true, n: null },
      { nested: { token: 'tok_secret' }, path: '/p' },
      { deep: { er: { secret: 'whsec_secret' } } },
      { headers: { authorization: 'Bearer live_secret', 'x-api-key': 'live_secret', accept: '*/*' } },
      { list: ['a', 'b'], count: 2, undef: undefined },
      {},
    ];
    const now = capture();
    const before = capture();
    const log = createLogger('info', now.stream);
    const old = redactingEverything(before.stream);
    for (const f of samples) {
      log.info('request', f);
      old.info('request', f);
    }
    expect(now.lines().map(withoutTime)).toEqual(before.lines().map(withoutTime));
    expect(now.lines()).toHaveLength(samples.length);
    expect(JSON.stringify(now.lines())).not.toMatch(/live_secret|tok_secret|whsec_secret/);
  });

  it('sends only fields redaction cannot change past it', () => {
    expect(redactionFree({ requestId: 'r', method: 'GET', path: '/', status: 200, ms: 1 })).toBe(true);
    expect(redactionFree({ requestId: 'r', apiKey: 'x' })).toBe(false);
    expect(redactionFree({ requestId: 'r', headers: {} })).toBe(false);
    expect(redactionFree({ list: ['key'] })).toBe(false);
  });
});

describe('the buffered stdout', () => {
  const RUNTIME = path.join(__dirname, '..', 'dist', 'index.js');

  it.each(['exit', 'SIGTERM'])('writes every line logged before the process ends (%s)', (how) => {
    // Lines held in the buffer when the process ends: the exit handler writes them.
    const script = `
      const { createLogger } = require(${JSON.stringify(RUNTIME)});
      const log = createLogger('info');
      process.on('SIGTERM', () => process.exit(0));
      for (let i = 0; i < 5003; i++) log.info('request', { requestId: 'r-' + i, method: 'GET', path: '/licenses/check', status: 200, ms: 0.1 });
      ${how === 'exit' ? 'process.exit(0);' : "process.kill(process.pid, 'SIGTERM');"}`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    const ids = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).requestId);
    expect(ids).toEqual(Array.from({ length: 5003 }, (_, i) => `r-${i}`));
  });

  it('drops and counts lines past 8 MiB waiting for stdout, and says so on stderr, instead of holding them all', () => {
    // 150 000 lines (about 16 MiB) logged without a turn of the event loop: no write completes meanwhile.
    const script = `
      const { createLogger, droppedLogLines } = require(${JSON.stringify(RUNTIME)});
      const log = createLogger('info');
      for (let i = 0; i < 150000; i++) log.info('request', { requestId: 'r-' + i, method: 'GET', path: '/licenses/check', status: 200, ms: 0.1 });
      process.stderr.write('dropped ' + droppedLogLines() + '\\n');
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    expect(r.status).toBe(0);
    const written = r.stdout.split('\n').filter(Boolean);
    const dropped = Number(/dropped (\d+)/.exec(r.stderr)?.[1]);
    expect(dropped).toBeGreaterThan(0);
    // What was kept is whole, in order, and with what was dropped makes every line logged.
    expect(written.length + dropped).toBe(150_000);
    expect(written.map((l) => JSON.parse(l).requestId).slice(0, 3)).toEqual(['r-0', 'r-1', 'r-2']);
    expect(r.stderr).toContain('log lines dropped: stdout is read slower than they are written');
  });
});
