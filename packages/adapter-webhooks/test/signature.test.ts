import { createHmac } from 'node:crypto';
import { StandardWebhookSigner, signWebhook, verifyWebhook } from '../src';

describe('Standard Webhooks signatures', () => {
  it('matches the specification test vector and verifies with plain node:crypto', () => {
    // The example of the Standard Webhooks reference libraries.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const body = '{"test": 2432232314}';
    const sig = signWebhook(secret, id, 1614265330, body);
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const manual = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`${id}.1614265330.${body}`)
      .digest('base64');
    expect(sig).toBe(`v1,${manual}`);
    expect(verifyWebhook(secret, id, 1614265330, body, `v1,bogus ${sig}`)).toBe(true);
    expect(verifyWebhook(secret, id, 1614265331, body, sig)).toBe(false);
    expect(verifyWebhook(secret, id, 1614265330, `${body} `, sig)).toBe(false);
  });

  it('makes a fresh secret each time and signs each POST with it', () => {
    const signer = new StandardWebhookSigner();
    const [a, b] = [signer.newSecret(), signer.newSecret()];
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(a).not.toBe(b);
    const h = signer.headers(a, 'evt_1', new Date('2026-01-01T00:00:00.900Z'), '{"x":1}');
    expect(h).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': '1767225600' });
    expect(verifyWebhook(a, 'evt_1', 1767225600, '{"x":1}', h['webhook-signature'])).toBe(true);
    expect(verifyWebhook(b, 'evt_1', 1767225600, '{"x":1}', h['webhook-signature'])).toBe(false);
  });
});
