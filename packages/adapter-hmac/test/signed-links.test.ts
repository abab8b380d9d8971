import { describeSignedLinksContract, FakeSignedLinks } from '@tollgate/core/testing';
import { HmacSignedLinks } from '../src';

describeSignedLinksContract('HMAC-SHA256 links', (secret) => new HmacSignedLinks(secret));
describeSignedLinksContract('fake links', (secret) => new FakeSignedLinks(secret));

describe('HMAC signed links', () => {
  const links = new HmacSignedLinks('a secret for tests');
  const now = new Date('2026-01-01T00:00:00Z');

  it('round-trips a payload until it expires', () => {
    const token = links.sign({ planId: 'p1', n: 3 }, 60_000, now);
    expect(links.verify(token, now)).toMatchObject({ planId: 'p1', n: 3 });
    expect(links.verify(token, new Date(now.getTime() + 60_000))).toBeUndefined();
  });

  it('refuses a changed payload, a changed mac, another secret and garbage', () => {
    const token = links.sign({ planId: 'p1' }, 60_000, now);
    const [body, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ planId: 'p2', exp: now.getTime() + 60_000 })).toString('base64url');
    expect(links.verify(`${forged}.${mac}`, now)).toBeUndefined();
    expect(links.verify(`${body}.${mac.slice(0, -2)}aa`, now)).toBeUndefined();
    expect(new HmacSignedLinks('another secret').verify(token, now)).toBeUndefined();
    for (const bad of ['', 'x', 'x.y', '.', `${body}.`]) expect(links.verify(bad, now)).toBeUndefined();
  });
});

describe('HMAC signed links have one spelling', () => {
  const links = new HmacSignedLinks('a secret for tests');
  const now = new Date('2026-01-01T00:00:00Z');

  it('refuses a valid token with segments added after it', () => {
    const token = links.sign({ planId: 'p1' }, 60_000, now);
    expect(links.verify(token, now)).toMatchObject({ planId: 'p1' });
    for (const extra of [`${token}.a`, `${token}.b`, `${token}.`, `${token}..`, `${token}.${token}`])
      expect(links.verify(extra, now)).toBeUndefined();
  });
});
