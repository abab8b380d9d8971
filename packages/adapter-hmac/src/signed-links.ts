import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SignedLinks } from '@tollgate/core';

/**
 * Signed links as a JSON payload with an expiry and an HMAC-SHA256 of it (`<body>.<mac>`, both
 * base64url). Every instance given the same secret verifies the others' links. A token is exactly
 * these two parts: anything more (`<body>.<mac>.x`) is refused, so one signed link has one spelling.
 */
export class HmacSignedLinks implements SignedLinks {
  constructor(private readonly secret: string) {}

  sign(payload: object, ttlMs: number, now: Date): string {
    const body = Buffer.from(JSON.stringify({ ...payload, exp: now.getTime() + ttlMs }), 'utf8').toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  verify<T>(token: string, now: Date): T | undefined {
    const parts = token.split('.');
    if (parts.length !== 2) return undefined;
    const [body, mac] = parts;
    if (!body || !mac) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T & { exp: number };
      return payload.exp > now.getTime() ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}
