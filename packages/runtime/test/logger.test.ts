import { Writable } from 'node:stream';
import { createLogger } from '../src';

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
