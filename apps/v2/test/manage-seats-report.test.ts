/**
 * The bounded validation report (packages/http `compile`, the resource audit) keeps its full report
 * for the largest body a route takes: v2's `manage-seats` at its 500 `replace` changes (2 001
 * values, past the first bound of 2 000) is told exactly what is wrong, nothing said left out.
 */
import type { DomainError } from '@tollgate/core';
import { compile, FULL_REPORT_VALUES } from '@tollgate/http';
import { manageSeatsBody } from '../src/routes/seats';

it('a maximum-size manage-seats body (500 replace changes) gets the full report, nothing said left out', () => {
  const seats = compile(manageSeatsBody);
  const changes = Array.from({ length: 500 }, (_, i) => ({ type: 'replace', granteeId: `a${i}`, newGranteeId: `b${i}` }));
  changes[300].newGranteeId = '';
  expect(FULL_REPORT_VALUES).toBeGreaterThanOrEqual(2_001);
  let e: DomainError | undefined;
  try {
    seats(changes);
  } catch (thrown) {
    e = thrown as DomainError;
  }
  expect(e?.details?.length).toBeGreaterThan(0);
  expect(e?.details?.every((d) => d.property.startsWith('300'))).toBe(true);
});
