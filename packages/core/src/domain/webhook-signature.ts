import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` and the
 * base64 of its key bytes; `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` under those bytes.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: 24 random bytes. */
export const newWebhookSecret = (): string => WEBHOOK_SECRET_PREFIX + randomBytes(24).toString('base64');

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

/** The headers of one POST: the same id on every attempt (receivers deduplicate on it). */
export function webhookHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'Tollgate-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}

/** Retry delays after each failed attempt (DESIGN section 12), then every 24 h. */
export const WEBHOOK_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
const DAY_MS = 86_400_000;
/** How long a delivery is retried before it fails and its endpoint is disabled. */
export const WEBHOOK_RETRY_WINDOW_MS = 3 * DAY_MS;

/** When to try again after `attempts` failed attempts, or null when the retry window is over. */
export function nextWebhookAttempt(createdAt: Date, attempts: number, now: Date): Date | null {
  const next = new Date(now.getTime() + (WEBHOOK_RETRY_DELAYS_MS[attempts - 1] ?? DAY_MS));
  return next.getTime() - createdAt.getTime() > WEBHOOK_RETRY_WINDOW_MS ? null : next;
}
