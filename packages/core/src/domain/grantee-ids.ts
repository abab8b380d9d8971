import { invalid } from '../errors';
import { GRANTEE_ID_MAX_LENGTH } from './limits';

/**
 * What the capability checks' `granteeIds` list (`a,b` or `[a,b]`, items trimmed and unquoted)
 * would read differently from the id itself: a comma splits it, blanks around it are trimmed, a
 * leading `[` or trailing `]` may be taken for the list's brackets, a leading or trailing quote is
 * stripped. Such an id could be sold but never checked, so no grantee id is written with one.
 */
const UNREADABLE = /,|^\s|\s$|^[["']|["'\]]$/;

/** Whether the check's `granteeIds` reads this id back as itself, alone or in a list. */
export const isCheckableGranteeId = (id: string): boolean => id.length > 0 && !UNREADABLE.test(id);

/** Why an id that is not itself a grantee id must read back (the owner of a checkout without a grantee), and what to do instead. */
export interface UnreadableReason {
  /** What the value is used as, e.g. "gets the seat of an item without a grantee". */
  because: string;
  /** What the caller can do instead, e.g. "name a grantee". */
  fix: string;
}

/**
 * A grantee id about to be written (a license, a checkout, a seat, a grantee record): 400 naming
 * `property` unless the check can read it back (nor one longer than `GRANTEE_ID_MAX_LENGTH`). `reason`: the value is not a grantee id of itself
 * (the owner, who gets the seat when no grantee is named), said in the message with its fix.
 */
export function assertCheckableGranteeId(property: string, id: string, reason?: UnreadableReason): void {
  if (typeof id !== 'string' || id.length === 0) invalid(property, 'must be a non-empty string');
  // The check refuses longer ids (its caches are bounded): one sold longer could never be checked.
  if (id.length > GRANTEE_ID_MAX_LENGTH)
    invalid(
      property,
      reason
        ? `${reason.because}; the license check reads ids of at most ${GRANTEE_ID_MAX_LENGTH} characters: ${reason.fix}`
        : `must be at most ${GRANTEE_ID_MAX_LENGTH} characters: the license check reads no longer ids`,
    );
  if (!isCheckableGranteeId(id))
    invalid(
      property,
      reason
        ? `${reason.because}; the license check could not read it back (a comma, a blank or a quote at either end, a leading [ or a trailing ]): ${reason.fix}`
        : 'must not contain a comma, begin or end with a blank or a quote, begin with [ or end with ]: the license check could not read it back',
    );
}
