import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { describeWebhookSenderContract } from '@tollgate/core/testing';
import { HttpWebhookSender, isPrivateAddress } from '../src';

// The sender against real local HTTP servers: what a receiver can make it do, and what it refuses.
let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/slow' || req.url === '/hang') return; // never answers (the sender gives up)
    if (req.url === '/redirect') {
      res.statusCode = 307;
      res.setHeader('location', '/ok');
      return void res.end();
    }
    if (req.url === '/big') return void res.end('y'.repeat(100_000));
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => res.end(`got ${req.headers['webhook-id']} ${body}`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describeWebhookSenderContract('node:http', () => ({
  sender: (options) => new HttpWebhookSender(options),
  receiver: (behaviour) => `${base}/${behaviour}`,
  received: () => hits,
}));

const post = (sender: HttpWebhookSender, url: string) => sender.send({ url, headers: { 'webhook-id': 'msg_1' }, body: '{"a":1}' });

it('POSTs the body with the headers and returns the answer', async () => {
  expect(await post(new HttpWebhookSender({ allowPrivate: true }), `${base}/ok`)).toEqual({ status: 200, body: 'got msg_1 {"a":1}' });
});

it('does not follow redirects: a 3xx is the answer', async () => {
  hits.length = 0;
  expect(await post(new HttpWebhookSender({ allowPrivate: true }), `${base}/redirect`)).toMatchObject({ status: 307 });
  expect(hits).toEqual(['/redirect']);
});

it('keeps only the first bytes of a long answer', async () => {
  const r = await post(new HttpWebhookSender({ allowPrivate: true, maxBodyBytes: 100 }), `${base}/big`);
  expect(r).toEqual({ status: 200, body: 'y'.repeat(100) });
});

it('gives up when no answer comes within the timeout', async () => {
  const r = await post(new HttpWebhookSender({ allowPrivate: true, timeoutMs: 200 }), `${base}/slow`);
  expect(r).toEqual({ status: null, error: 'no answer within 200 ms' });
});

it('reports an unreachable receiver as an answer, not a throw', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const r = await post(new HttpWebhookSender({ allowPrivate: true }), `http://127.0.0.1:${port}/`);
  expect(r).toMatchObject({ status: null });
  expect((r as { error: string }).error).toMatch(/^could not be reached: .*ECONNREFUSED/);
});

it('refuses private targets by address, by name, and by what a name resolves to at connect time', async () => {
  const strict = new HttpWebhookSender({ allowPrivate: false, resolve: (_h, cb) => cb(null, '127.0.0.1', 4) });
  for (const url of [
    'http://127.0.0.1/',
    'http://localhost/',
    'http://x.localhost/',
    'http://10.0.0.1/',
    'http://[::1]/',
    'http://[fd00::1]/',
    'http://169.254.169.254/',
    'http://[::ffff:192.168.1.1]/',
  ])
    expect(strict.refusal(url)).toBe('must not be a local or private address');
  expect(strict.refusal('ftp://vendor.example.com/')).toBe('must be an http or https URL');
  expect(strict.refusal('https://user:pw@vendor.example.com/')).toBe('must not carry credentials');
  expect(strict.refusal('not a url')).toBe('must be an absolute URL');
  expect(strict.refusal('https://hooks.vendor.example.com/')).toBeNull();
  // A public-looking name that resolves to the loopback (DNS rebinding) is refused when connecting.
  const port = new URL(base).port;
  // The name never leaves the machine: the sender's resolver maps it to the loopback; nock lets it pass to there.
  nock.enableNetConnect((host) => host.startsWith('127.0.0.1') || host.startsWith('hooks.vendor.example.com'));
  hits.length = 0;
  const r = await post(strict, `http://hooks.vendor.example.com:${port}/ok`);
  expect(r).toMatchObject({ status: null });
  expect((r as { error: string }).error).toMatch(/resolves to a private address/);
  expect(hits).toEqual([]);
  // Allowed (WEBHOOK_ALLOW_PRIVATE=true), the same name reaches the receiver.
  const open = new HttpWebhookSender({ allowPrivate: true, resolve: (_h, cb) => cb(null, '127.0.0.1', 4) });
  expect(await post(open, `http://hooks.vendor.example.com:${port}/ok`)).toMatchObject({ status: 200 });
  nock.enableNetConnect((host) => /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host));
});

it('tells private addresses from public ones', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.1.1',
    '172.16.0.1',
    '192.168.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fc00::1',
    '::ffff:10.0.0.1',
    'garbage',
  ])
    expect(isPrivateAddress(a)).toBe(true);
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(a)).toBe(false);
});
