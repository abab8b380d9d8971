/* When a failed webhook delivery is tried again (DESIGN section 12): pure rules. Signing lives behind the WebhookSigner port. */

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
