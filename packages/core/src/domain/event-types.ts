import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../model';

/**
 * An event type as given in either spelling: Tollgate's (`subscription.created`) or the published
 * catalog API's (`subscription_created`, the first underscore for the dot; `subscription_canceled`
 * with one `l` too). Undefined when it names no type.
 */
export function canonicalEventType(raw: string): WebhookEventType | undefined {
  const dotted = raw.includes('.') ? raw : raw.replace('_', '.');
  const spelled = dotted.replace(/\.canceled$/, '.cancelled');
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(spelled) ? (spelled as WebhookEventType) : undefined;
}

/** The published spelling of a type (`subscription_created`): what the catalog API's own clients compare with. */
export const publishedEventType = (t: WebhookEventType): string => t.replace('.', '_');

/** Every type in both spellings (what a request may name). */
export const EVENT_TYPE_SPELLINGS: readonly string[] = [...WEBHOOK_EVENT_TYPES, ...WEBHOOK_EVENT_TYPES.map(publishedEventType)];
