/* The contract every webhook sender keeps (the in-memory fake and the node:http sender): the same
   address guard, a timeout that turns a late answer into "no answer", and redirects that are
   answers, never followed. */
import type { WebhookSender } from '../../ports';

/** What a receiver does with a POST: answer 200 with what it got, answer 307 to /ok, or never answer. */
export type ReceiverBehaviour = 'ok' | 'redirect' | 'hang';

export interface WebhookSenderHarness {
  /** A sender with these rules. */
  sender(options: { allowPrivate: boolean; timeoutMs: number }): WebhookSender;
  /**
   * The URL of a receiver that behaves so (the `ok` one answers 200 with `got <webhook-id> <body>`);
   * it may be on a private address: deliveries to it are made with `allowPrivate: true`.
   */
  receiver(behaviour: ReceiverBehaviour): string;
  /** The paths the receivers were POSTed to so far, in order. */
  received(): string[];
}

/**
 * Every spelling of a loopback, private or internal target the guard must refuse: names, IPv4,
 * IPv4 in other notations, and IPv6 forms that reach an IPv4 address (mapped, translated,
 * compatible, NAT64, 6to4), link-local, unique-local, metadata, unspecified and multicast.
 */
export const PRIVATE_WEBHOOK_TARGETS: readonly string[] = [
  'http://localhost/',
  'http://x.localhost/',
  'http://metadata.google.internal/',
  'http://printer.local/',
  'http://intranet/',
  'http://127.0.0.1/',
  'http://127.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://0.0.0.0/',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://168.63.129.16/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://[::1]/',
  'http://[::]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:0:7f00:1]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[::ffff:192.168.1.1]/',
  'http://[::ffff:a9fe:a9fe]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b:1::1]/',
  'http://[2002:7f00:1::]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[2001::1]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[fd00::1]/',
  'http://[fd00:ec2::254]/',
  'http://[fec0::1]/',
  'http://[ff02::1]/',
  'http://[2001:db8::1]/',
];

/** Public targets the guard must let through. */
export const PUBLIC_WEBHOOK_TARGETS: readonly string[] = [
  'https://hooks.vendor.example.com/tollgate',
  'http://93.184.216.34/',
  'https://8.8.8.8:8443/hooks',
  'https://[2606:4700::1111]/',
  'https://[::ffff:8.8.8.8]/',
  'https://[64:ff9b::808:808]/',
  'https://[2002:808:808::1]/',
];

export function describeWebhookSenderContract(name: string, harness: () => WebhookSenderHarness): void {
  describe(`${name}: webhook sender`, () => {
    const post = (sender: WebhookSender, url: string) => sender.send({ url, headers: { 'webhook-id': 'msg_1' }, body: '{"a":1}' });

    it('POSTs the body with the headers and returns the answer', async () => {
      const h = harness();
      expect(await post(h.sender({ allowPrivate: true, timeoutMs: 5_000 }), h.receiver('ok'))).toEqual({
        status: 200,
        body: 'got msg_1 {"a":1}',
      });
    });

    it('does not follow redirects: a 3xx is the answer', async () => {
      const h = harness();
      const before = h.received().length;
      expect(await post(h.sender({ allowPrivate: true, timeoutMs: 5_000 }), h.receiver('redirect'))).toMatchObject({ status: 307 });
      expect(h.received().slice(before)).toEqual([new URL(h.receiver('redirect')).pathname]);
    });

    it('gives up when no answer comes within the timeout', async () => {
      const h = harness();
      expect(await post(h.sender({ allowPrivate: true, timeoutMs: 200 }), h.receiver('hang'))).toEqual({
        status: null,
        error: 'no answer within 200 ms',
      });
    });

    it('refuses every spelling of a private target, at registration and when sending, without contacting it', async () => {
      const h = harness();
      const strict = h.sender({ allowPrivate: false, timeoutMs: 1_000 });
      const before = h.received().length;
      for (const url of PRIVATE_WEBHOOK_TARGETS) {
        expect({ url, refusal: strict.refusal(url) }).toEqual({ url, refusal: 'must not be a local or private address' });
        expect({ url, answer: await post(strict, url) }).toEqual({
          url,
          answer: { status: null, error: 'refused: the URL must not be a local or private address' },
        });
      }
      // The receiver itself is on a private address for the real sender: refused too when not allowed.
      const local = new URL(h.receiver('ok'));
      if (local.hostname === '127.0.0.1') expect((await post(strict, local.toString())).status).toBeNull();
      expect(h.received().slice(before)).toEqual([]);
      for (const url of PUBLIC_WEBHOOK_TARGETS) expect({ url, refusal: strict.refusal(url) }).toEqual({ url, refusal: null });
    });

    it('refuses what is not an http(s) URL whatever the address rules', () => {
      const open = harness().sender({ allowPrivate: true, timeoutMs: 1_000 });
      expect(open.refusal('ftp://vendor.example.com/')).toBe('must be an http or https URL');
      expect(open.refusal('https://user:pw@vendor.example.com/')).toBe('must not carry credentials');
      expect(open.refusal('not a url')).toBe('must be an absolute URL');
      expect(open.refusal(`https://vendor.example.com/${'a'.repeat(2048)}`)).toBe('must be at most 2048 characters');
      expect(open.refusal('http://127.0.0.1:8080/hooks')).toBeNull();
    });
  });
}
