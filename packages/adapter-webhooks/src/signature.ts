import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { WebhookSigner } from '@tollgate/core';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` and the
 * base64 of its key bytes; `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under those bytes.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');

/** The `webhook-signature` value of one message. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** Whether one of the space-separated `v1,` signatures of the header is this message's. */
export function verifyWebhook(secret: string, id: string, timestampSeconds: number, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestampSeconds, body));
  return header.split(' ').some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The signer Tollgate delivers with: 24 random bytes per secret, HMAC-SHA256 signatures. */
export class StandardWebhookSigner implements WebhookSigner {
  newSecret(): string {
    return WEBHOOK_SECRET_PREFIX + randomBytes(24).toString('base64');
  }

  headers(secret: string, id: string, at: Date, body: string): Record<string, string> {
    const timestamp = Math.floor(at.getTime() / 1000);
    return {
      'content-type': 'application/json',
      'user-agent': 'Tollgate-Webhooks/1',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, id, timestamp, body),
    };
  }
}
