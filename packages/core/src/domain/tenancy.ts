import { ErrorCodes, fail } from '../errors';
import type { Owned, Tenant } from '../model';

/**
 * A record the caller's key may act on: of its organisation and its mode (test or live). The
 * contract's statuses (docs/decisions.md, "Unknown, foreign and other-mode ids"): no such record
 * -> NOT_FOUND; another organisation's record -> FORBIDDEN (contract rule 4); a record of the
 * other mode (a test key naming a live record, or the reverse) -> NOT_FOUND, since for that key the
 * record does not exist (DESIGN section 4).
 */
export function assertAccessible<T extends Owned>(record: T | undefined | null, tenant: Tenant, what: string): T {
  if (!record || (record.organisationId === tenant.organisationId && record.isTest !== tenant.isTest)) {
    return fail(ErrorCodes.NOT_FOUND, `${what} not found`);
  }
  if (record.organisationId !== tenant.organisationId) {
    return fail(ErrorCodes.FORBIDDEN, `${what} belongs to another organisation`);
  }
  return record;
}
