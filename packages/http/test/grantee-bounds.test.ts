import { CHECK_GRANTEES_MAX, GRANTEE_ID_MAX_LENGTH } from '@tollgate/core';
import { parseGranteeIds } from '../src/params';

// The resource audit: every grantee id a check is asked is kept in memory (the check's snapshot
// LRU, as `product|grantee`): 15 KB ids, 32 at a time, ran the server out of heap. The check now
// refuses an id no license can hold and more than a bounded number of ids.

const refusedWith = (raw: string) => {
  try {
    parseGranteeIds(raw);
  } catch (e) {
    return (e as { details: unknown }).details;
  }
  throw new Error('accepted');
};

describe('parseGranteeIds bounds', () => {
  it('a grantee id as long as a license holds is read; one character more is a 400 naming granteeIds', () => {
    const longest = 'g'.repeat(GRANTEE_ID_MAX_LENGTH);
    expect(GRANTEE_ID_MAX_LENGTH).toBe(320);
    expect(parseGranteeIds(longest)).toEqual([longest]);
    expect(parseGranteeIds(`a,${longest}`)).toEqual(['a', longest]);
    const tooLong = { property: 'granteeIds', error: 'names a grantee id longer than 320 characters' };
    expect(refusedWith(`${longest}x`)).toEqual([tooLong]);
    expect(refusedWith(`[a,"${longest}x"]`)).toEqual([tooLong]);
    expect(refusedWith('x'.repeat(15_000))).toEqual([tooLong]);
  });

  it(`at most ${CHECK_GRANTEES_MAX} distinct grantees per check (a repeated id counts once)`, () => {
    const ids = Array.from({ length: CHECK_GRANTEES_MAX }, (_, i) => `g${i}`);
    expect(parseGranteeIds(ids.join(','))).toEqual(ids);
    expect(parseGranteeIds([...ids, ...ids].join(','))).toEqual(ids);
    expect(refusedWith([...ids, 'one-more'].join(','))).toEqual([{ property: 'granteeIds', error: 'names more than 100 grantees' }]);
  });
});
