/* The contract every key cipher keeps (the KeyCipher port, which seals signing keys at rest): what
   it seals opens again under the same master secret, on any instance, and under no other; the
   secret never shows in the sealed form; a changed seal is refused. */
import { randomBytes } from 'node:crypto';
import type { KeyCipher } from '../../ports';

export function describeKeyCipherContract(name: string, make: (masterSecret: string) => KeyCipher): void {
  describe(`${name}: key cipher`, () => {
    const one = 'the first master secret of these tests';
    const two = 'the second master secret of these tests';

    it('opens what it sealed: empty, short, binary and long secrets', () => {
      const cipher = make(one);
      for (const plain of [Buffer.alloc(0), Buffer.from('k'), randomBytes(32), randomBytes(4096), Buffer.from('é ✓ \u0000 end', 'utf8')])
        expect(cipher.open(cipher.seal(plain)).equals(plain)).toBe(true);
    });

    it('opens on another instance holding the same master secret (another process, a restart)', () => {
      const plain = randomBytes(32);
      expect(make(one).open(make(one).seal(plain)).equals(plain)).toBe(true);
    });

    it('refuses what another master secret sealed', () => {
      const sealed = make(one).seal(randomBytes(32));
      expect(() => make(two).open(sealed)).toThrow();
    });

    it('seals the same secret differently each time', () => {
      const cipher = make(one);
      const plain = randomBytes(32);
      const [a, b] = [cipher.seal(plain), cipher.seal(plain)];
      expect(a).not.toBe(b);
      expect(cipher.open(a).equals(plain) && cipher.open(b).equals(plain)).toBe(true);
    });

    it('keeps the secret out of the sealed form, which is one line of printable ASCII', () => {
      const cipher = make(one);
      const text = Buffer.from('a-very-recognisable-secret-value', 'utf8');
      const binary = randomBytes(32);
      for (const plain of [text, binary]) {
        const sealed = cipher.seal(plain);
        expect(sealed).toMatch(/^[\x21-\x7e]+$/);
        for (const encoding of ['utf8', 'hex', 'base64', 'base64url'] as const)
          expect(sealed.includes(plain.toString(encoding).slice(0, 16))).toBe(false);
      }
    });

    it('refuses a seal changed in any character, and garbage', () => {
      const cipher = make(one);
      const plain = randomBytes(48);
      const sealed = cipher.seal(plain);
      let refused = 0;
      for (let i = 0; i < sealed.length; i++) {
        const changed = sealed.slice(0, i) + (sealed[i] === 'A' ? 'B' : 'A') + sealed.slice(i + 1);
        let opened: Buffer | undefined;
        try {
          opened = cipher.open(changed);
        } catch {
          refused++;
        }
        // Only a change in the unused bits of a base64 character may decode to the same seal.
        if (opened) expect(opened.equals(plain)).toBe(true);
      }
      expect(refused).toBeGreaterThan(sealed.length * 0.8);
      for (const garbage of ['', 'x', '...', 'v1.a.b.c', 'fake.a.b.c', sealed.split('').reverse().join('')])
        expect(() => cipher.open(garbage)).toThrow();
    });
  });
}
