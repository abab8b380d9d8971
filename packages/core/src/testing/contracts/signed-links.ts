/* The contract every link signer keeps (the SignedLinks port): a link carries its payload until it
   expires, any instance holding the same secret reads it, and nothing else verifies. */
import type { SignedLinks } from '../../ports';

/** Every token with one character changed: each must be refused or read as the very same payload. */
function oneCharacterChanges(token: string): string[] {
  return [...token].map((c, i) => token.slice(0, i) + (c === 'A' ? 'B' : 'A') + token.slice(i + 1));
}

export function describeSignedLinksContract(name: string, make: (secret: string) => SignedLinks): void {
  describe(`${name}: signed links`, () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const later = (ms: number) => new Date(now.getTime() + ms);

    it('carries its payload, with its expiry, until it expires', () => {
      const links = make('a secret for tests');
      const token = links.sign({ planId: 'p1', n: 3, nested: { ok: true } }, 60_000, now);
      expect(links.verify(token, now)).toEqual({ planId: 'p1', n: 3, nested: { ok: true }, exp: now.getTime() + 60_000 });
      expect(links.verify(token, later(59_999))).toMatchObject({ planId: 'p1' });
      expect(links.verify(token, later(60_000))).toBeUndefined();
    });

    it('is URL-safe', () => {
      const token = make('a secret for tests').sign({ page: 'portal', text: 'a/b?c=d&e f' }, 1000, now);
      expect(token).toMatch(/^[A-Za-z0-9_\-.~]+$/);
    });

    it('is read by every instance holding the same secret, and by no other', () => {
      const token = make('a secret for tests').sign({ planId: 'p1' }, 60_000, now);
      expect(make('a secret for tests').verify(token, now)).toMatchObject({ planId: 'p1' });
      expect(make('another secret').verify(token, now)).toBeUndefined();
    });

    it('refuses a token changed in any character, and garbage', () => {
      const links = make('a secret for tests');
      const token = links.sign({ planId: 'p1', role: 'viewer' }, 60_000, now);
      let refused = 0;
      for (const changed of oneCharacterChanges(token)) {
        const read = links.verify<{ planId: string }>(changed, now);
        if (read === undefined) refused++;
        else expect(read).toEqual(links.verify(token, now));
      }
      // Only a change in the unused bits of a base64 character may decode to the same token.
      expect(refused).toBeGreaterThan(token.length * 0.8);
      for (const bad of ['', 'x', 'x.y', '.', '~', `${token}x`, `x${token}`, token.slice(0, -1)])
        expect(links.verify(bad, now)).toBeUndefined();
    });
  });
}
