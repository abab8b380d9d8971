import { ErrorCodes, fail, type ErrorCode } from '../errors';
import type { Owned, Tenant } from '../model';

/**
 * A record of another organisation is forbidden (403 in every generation); a record of the other
 * mode (test vs live) does not exist for this caller.
 */
export function assertAccessible<T extends Owned>(
  record: T | undefined | null,
  tenant: Tenant,
  notFound: ErrorCode,
  what: string,
): T {
  if (!record) return fail(notFound, `${what} not found`);
  if (record.organisationId !== tenant.organisationId) {
    return fail(ErrorCodes.FORBIDDEN, `${what} belongs to another organisation`);
  }
  if (record.isTest !== tenant.isTest) return fail(notFound, `${what} not found`);
  return record;
}
