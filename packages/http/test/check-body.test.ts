import fc from 'fast-check';
import { NO_END, type SignedCheck } from '@tollgate/core';
import { checkBody, checkView } from '../src';

// The check's fast path renders answers with `checkBody`; the routers with `checkView` and JSON.stringify.
// Both must give the same bytes for every answer the domain can produce.

/** An answer shaped as the domain builds it: names in code-point order, ends in that order, as `Object.fromEntries` makes them. */
function answer(names: string[], ends: Date[], signed: { publicHash: string; signature: string }): SignedCheck {
  const capabilities = [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    capabilities,
    capabilitiesEndDates: Object.fromEntries(capabilities.map((c, i) => [c, ends[i % ends.length]])),
    capsHashed: capabilities.join(','),
    ...signed,
  };
}

const same = (c: SignedCheck) => expect(checkBody(c)).toBe(JSON.stringify(checkView(c)));

it('renders the bytes of checkView + JSON.stringify for any names, dates and signatures', () => {
  const name = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 12 }), // any code points, quotes, controls, astral
    fc.string({ unit: 'grapheme', maxLength: 8 }),
    fc.nat({ max: 2 ** 33 }).map(String), // integer-like names: objects list them first
    fc.constantFrom('__proto__', 'constructor', 'toString', '\ud800', 'a"b\\c', '\u2028'),
  );
  const date = fc.oneof(
    fc.date({ noInvalidDate: true }), // years -271821 to 275760
    fc.constant(NO_END),
    fc.integer({ min: 0, max: 400 }).map((d) => new Date(Date.UTC(2027, 0, 1) + d * 86_400_000)),
  );
  fc.assert(
    fc.property(
      fc.array(name, { minLength: 1, maxLength: 10 }),
      fc.array(date, { minLength: 1, maxLength: 4 }),
      fc.record({ publicHash: fc.string({ unit: 'binary' }), signature: fc.string({ unit: 'binary' }) }),
      (names, ends, signed) => same(answer(names, ends, signed)),
    ),
    { numRuns: 2000 },
  );
});

it('renders integer-like names in the order objects keep them, and a real answer as before', () => {
  const end = new Date('2027-03-01T00:00:00.000Z');
  const c = answer(['10', '9', 'b', 'a', '4294967295'], [end, NO_END], { publicHash: '04ab', signature: '30cd' });
  same(c);
  // Names stay in code-point order; the end dates follow the object's key order (array indices first, ascending).
  expect(checkBody(c)).toBe(
    '{"capabilities":["10","4294967295","9","a","b"],' +
      '"capabilitiesEndDates":{"9":"2027-03-01T00:00:00.000Z","10":"2027-03-01T00:00:00.000Z","4294967295":"9999-12-31T23:59:59.999Z","a":"9999-12-31T23:59:59.999Z","b":"2027-03-01T00:00:00.000Z"},' +
      '"publicHash":"04ab","signature":"30cd","capsHashed":"10,4294967295,9,a,b"}',
  );
});

it('never answers an end from the memo of another time, however the times collide', () => {
  // Times 2^32 ms apart, days apart, a millisecond apart: asked alternately, each must render its own text.
  const times = [0, 2 ** 32, 2 ** 33, 86_400_000, 86_400_001, 1, -1, 4096, 8192];
  for (let round = 0; round < 3; round++)
    for (const t of times) {
      const d = new Date(Date.UTC(2027, 0, 1) + t);
      same(answer(['x'], [d], { publicHash: 'p', signature: 's' }));
      expect(checkBody(answer(['x'], [d], { publicHash: 'p', signature: 's' }))).toContain(`"x":"${d.toISOString()}"`);
    }
  // An invalid date throws as toISOString does (never a remembered text).
  expect(() => checkBody(answer(['x'], [new Date(NaN)], { publicHash: 'p', signature: 's' }))).toThrow(RangeError);
});
