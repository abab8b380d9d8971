import { ErrorCodes, fail } from '../errors';
import type { Owned, Tenant } from '../model';

/**
 * A record the caller's key may act on: of its organisation and its mode (test or live). Anything
 * else (no such record, another organisation's, the other mode's) is refused the same way, 403
 * with one message: the answer never tells whether an id exists elsewhere (docs/decisions.md,
 * "No existence oracle"). The contract gives 403 for another organisation's record; an unknown id
 * answers alike so that the two cannot be told apart.
 */
export function assertAccessible<T extends Owned>(record: T | undefined | null, tenant: Tenant, what: string): T {
  if (!record || record.organisationId !== tenant.organisationId || record.isTest !== tenant.isTest) {
    return fail(ErrorCodes.FORBIDDEN, `no ${what} with this id is visible to this API key`);
  }
  return record;
}
