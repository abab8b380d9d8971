/* The contract every signature scheme keeps: what it signs verifies, anything else does not, and
   it agrees with published known-answer vectors (as stripe-node tests its CryptoProvider). */
import type { SignatureEncoding, SignatureScheme } from '../../ports';

/** A published test vector: a key, a message, and its signature in each encoding the scheme gives. */
export interface SignatureVector {
  name: string;
  secret: Buffer;
  publicKey: string;
  message: string;
  signatures: Partial<Record<SignatureEncoding, string>>;
  /** The same key and message always give the same signature (HMAC; not randomised ECDSA). */
  deterministic: boolean;
}

export function describeSignatureSchemeContract(name: string, scheme: SignatureScheme, vectors: SignatureVector[]): void {
  describe(`${name}: signature scheme`, () => {
    const encodings: SignatureEncoding[] = ['der', 'p1363'];

    it('verifies what it signs, in every encoding, and nothing else', () => {
      const { publicKey, secret } = scheme.generate();
      const key = scheme.load(secret);
      for (const encoding of encodings) {
        const signature = scheme.sign(key, 'admin,edit,export', encoding);
        expect(signature).toMatch(/^[0-9a-f]+$/);
        expect(scheme.verify({ publicKey, secret }, 'admin,edit,export', signature, encoding)).toBe(true);
        expect(scheme.verify({ publicKey, secret }, 'admin,edit,exporT', signature, encoding)).toBe(false);
        const other = scheme.generate();
        expect(scheme.verify(other, 'admin,edit,export', signature, encoding)).toBe(false);
      }
    });

    it('makes a new key each time, and names it the same way each time', () => {
      const a = scheme.generate();
      const b = scheme.generate();
      expect(a.secret.equals(b.secret)).toBe(false);
      const record = { id: 'b8f3c1de-0000-4000-8000-000000000001', publicKey: a.publicKey };
      expect(scheme.publicHash(record)).toBe(scheme.publicHash({ ...record }));
      expect(scheme.publicHash(record)).toMatch(/^[0-9a-f]+$/);
    });

    for (const v of vectors) {
      it(`agrees with the known-answer vector ${v.name}`, () => {
        const key = scheme.load(v.secret);
        for (const [encoding, expected] of Object.entries(v.signatures) as [SignatureEncoding, string][]) {
          expect(scheme.verify({ publicKey: v.publicKey, secret: v.secret }, v.message, expected, encoding)).toBe(true);
          const ours = scheme.sign(key, v.message, encoding);
          if (v.deterministic) expect(ours).toBe(expected);
          else expect(scheme.verify({ publicKey: v.publicKey, secret: v.secret }, v.message, ours, encoding)).toBe(true);
        }
      });
    }
  });
}
