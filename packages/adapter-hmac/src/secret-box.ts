import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { KeyCipher } from '@tollgate/core';

/**
 * Encrypts secrets at rest with AES-256-GCM under a key derived (SHA-256) from the configured
 * master secret. Format: v1.<iv>.<tag>.<ciphertext>, base64url parts.
 */
export class SecretBox implements KeyCipher {
  private readonly key: Buffer;

  constructor(masterSecret: string) {
    if (!masterSecret || masterSecret.length < 16) throw new Error('the signing master secret must be at least 16 characters');
    this.key = createHash('sha256').update(`tollgate-signing-keys:${masterSecret}`).digest();
  }

  seal(plain: Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string): Buffer {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  }
}
