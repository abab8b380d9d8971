/* When a failed webhook delivery is tried again (DESIGN section 12): pure rules. Signing lives behind the WebhookSigner port. */

/** Retry delays after each failed attempt (DESIGN section 12), then every 24 h. */
export const WEBHOOK_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];
const DAY_MS = 86_400_000;
/** How long a delivery is retried before it fails (and its endpoint is disabled if nothing else reached it meanwhile). */
export const WEBHOOK_RETRY_WINDOW_MS = 3 * DAY_MS;
/** How long a receiver has to answer one POST (the sender's timeout: `HttpWebhookSender` uses it by default). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/**
 * The shortest lease a webhook delivery is claimed for: the POST's timeout and 5 s to record its
 * outcome. A shorter one (`EVENT_LEASE_SECONDS` below it) would let another worker claim a slow
 * receiver's delivery while it is still being POSTed: sent twice at once, the first result lost.
 */
export const WEBHOOK_MIN_LEASE_MS = WEBHOOK_TIMEOUT_MS + 5_000;

/** Whether a receiver's status is a success (2xx); null (no answer) is not. */
export const isWebhookSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;

/** When to try again after `attempts` failed attempts, or null when the retry window is over. */
export function nextWebhookAttempt(createdAt: Date, attempts: number, now: Date): Date | null {
  const next = new Date(now.getTime() + (WEBHOOK_RETRY_DELAYS_MS[attempts - 1] ?? DAY_MS));
  return next.getTime() - createdAt.getTime() > WEBHOOK_RETRY_WINDOW_MS ? null : next;
}
