import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';
import type { SignatureEncoding, SignatureScheme } from '@tollgate/core';

const dsaEncoding = (e: SignatureEncoding) => (e === 'p1363' ? 'ieee-p1363' : 'der');

/** ECDSA P-256 / SHA-256: `publicHash` is the uncompressed public key (hex), so a check verifies offline. */
export class EcdsaP256Scheme implements SignatureScheme<KeyObject> {
  readonly algorithm = 'ecdsa-p256' as const;

  generate() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return { publicKey: uncompressedHex(publicKey), secret: privateKey.export({ format: 'der', type: 'pkcs8' }) };
  }

  load(secret: Buffer): KeyObject {
    return createPrivateKey({ key: secret, format: 'der', type: 'pkcs8' });
  }

  sign(key: KeyObject, message: string, encoding: SignatureEncoding): string {
    return sign('sha256', Buffer.from(message, 'utf8'), { key, dsaEncoding: dsaEncoding(encoding) }).toString('hex');
  }

  verify(key: { publicKey: string }, message: string, signature: string, encoding: SignatureEncoding): boolean {
    const publicKey = publicKeyFromUncompressedHex(key.publicKey);
    return verify(
      'sha256',
      Buffer.from(message, 'utf8'),
      { key: publicKey, dsaEncoding: dsaEncoding(encoding) },
      Buffer.from(signature, 'hex'),
    );
  }

  publicHash(key: { publicKey: string }): string {
    return key.publicKey;
  }

  publicKeyPem(key: { publicKey: string }): string {
    return publicKeyFromUncompressedHex(key.publicKey).export({ format: 'pem', type: 'spki' }).toString();
  }
}

/** HMAC-SHA256 with a per-organisation secret: `publicHash` is the SHA-256 (hex) of the key id. */
export class HmacSha256Scheme implements SignatureScheme<Buffer> {
  readonly algorithm = 'hmac-sha256' as const;

  generate() {
    return { publicKey: '', secret: randomBytes(32) };
  }

  load(secret: Buffer): Buffer {
    return secret;
  }

  sign(key: Buffer, message: string): string {
    return createHmac('sha256', key).update(message, 'utf8').digest('hex');
  }

  verify(key: { secret?: Buffer }, message: string, signature: string): boolean {
    if (!key.secret) return false;
    const expected = Buffer.from(this.sign(key.secret, message), 'hex');
    const given = Buffer.from(signature, 'hex');
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  publicHash(key: { id: string }): string {
    return createHash('sha256').update(key.id).digest('hex');
  }

  publicKeyPem(): null {
    return null;
  }
}

/** The uncompressed EC point (04 || X || Y) of a public key, in hex. */
export function uncompressedHex(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  return `04${Buffer.from(jwk.x as string, 'base64url').toString('hex')}${Buffer.from(jwk.y as string, 'base64url').toString('hex')}`;
}

/** A P-256 public key from its uncompressed hex form (what a check's `publicHash` carries). */
export function publicKeyFromUncompressedHex(hex: string): KeyObject {
  const raw = Buffer.from(hex, 'hex');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('not an uncompressed P-256 public key');
  return createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') },
    format: 'jwk',
  });
}
