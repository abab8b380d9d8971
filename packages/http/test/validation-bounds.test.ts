import { assertCleanText, DomainError } from '@tollgate/core';
import { compile, REPORTED_ERRORS, REPORTED_LIST_ITEMS, REPORTED_MESSAGE_CHARS, REPORTED_PROPERTY_CHARS } from '../src/validation';

// The resource audit: ajv with `allErrors` built one error object per bad item before anything was
// refused (`maxItems` did not stop it): a 1 MB body of 500 000 bad ids ran the server out of heap,
// 100 000 of them answered 8.5 MB. The report of a refused value is now bounded.

/** No lone UTF-16 surrogate (`String.prototype.isWellFormed`, not in this TypeScript lib). */
const wellFormed = (text: string): boolean => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

const refusal = (validate: (v: unknown) => unknown, value: unknown): DomainError => {
  try {
    validate(value);
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('accepted');
};

const batch = compile({
  type: 'object',
  properties: {
    action: { enum: ['abandon'] },
    cartIds: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 100 } },
  },
  required: ['action', 'cartIds'],
  additionalProperties: false,
});

describe('the report of a refused body is bounded', () => {
  it('500 000 bad items: refused at once, naming the list too long and a few items, saying more were left out', () => {
    const started = Date.now();
    const e = refusal(batch, { action: 'abandon', cartIds: Array(500_000).fill(1) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(e.details.length).toBeLessThanOrEqual(REPORTED_ERRORS + 1);
    expect(e.details).toContainEqual({ property: 'cartIds', error: 'must NOT have more than 100 items' });
    expect(e.details).toContainEqual({ property: 'cartIds.0', error: 'must be string' });
    expect(e.details).not.toContainEqual({ property: `cartIds.${REPORTED_LIST_ITEMS}`, error: 'must be string' });
    expect(e.details.at(-1)).toEqual({ property: 'body', error: expect.stringContaining('may have more errors, left out') });
    expect(e.message.length).toBeLessThan(10_000);
  });

  it('a list within its bounds but with many bad items: the first errors, then how many more', () => {
    const wide = compile({ type: 'array', items: { type: 'string' } });
    const e = refusal(wide, Array(1_000).fill(1));
    expect(e.details).toHaveLength(REPORTED_ERRORS + 1);
    expect(e.details[0]).toEqual({ property: '0', error: 'must be string' });
    expect(e.details.at(-1)).toEqual({ property: 'body', error: `has ${1_000 - REPORTED_ERRORS} more errors, left out` });
  });

  it('an object of 200 000 unknown keys: bounded too', () => {
    const closed = compile({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false });
    const body = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, 1]));
    const e = refusal(closed, body);
    expect(e.details.length).toBeLessThanOrEqual(REPORTED_ERRORS + 1);
    expect(e.details[0]).toEqual({ property: 'k0', error: 'is not allowed' });
  });

  it('a long list whose only errors are past the items checked is still refused with the first error of the whole', () => {
    const ids = compile({ type: 'array', items: { type: 'string' } });
    const value = [...Array(5_000).fill('ok'), 7];
    const e = refusal(ids, value);
    expect(e.details[0]).toEqual({ property: '5000', error: 'must be string' });
    // A list cut short for the report is not said to have too few items.
    const many = compile({ type: 'array', minItems: 6_000, items: { type: 'string' } });
    expect(refusal(many, [...Array(6_000).fill('ok'), 1]).details.map((d) => d.property)).toEqual(['6000', 'body']);
  });

  it('an ordinary bad body keeps its full report: every offending property, nothing said left out', () => {
    const e = refusal(batch, { action: 'keep', cartIds: [1, 'a', ''], extra: true });
    expect(e.details).toEqual([
      { property: 'extra', error: 'is not allowed' },
      { property: 'action', error: 'must be equal to one of the allowed values' },
      { property: 'cartIds.0', error: 'must be string' },
      { property: 'cartIds.2', error: 'must NOT have fewer than 1 characters' },
    ]);
    expect(batch({ action: 'abandon', cartIds: ['a'] })).toEqual({ action: 'abandon', cartIds: ['a'] });
  });
});

// The review of the bounds: a long key was repeated in every error's path (a 114 KB body answered a
// 5 MB message, a 914 KB one ran out of heap); unions were explained for every item against every
// item's errors; a maximum-size manage-seats body was just past the full report.
describe('the report of a refused body is bounded in characters too', () => {
  // `plans[].metadata`: any key, each value an object with no members of its own.
  const plans = compile({
    type: 'object',
    properties: {
      plans: {
        type: 'array',
        items: {
          type: 'object',
          properties: { metadata: { type: 'object', additionalProperties: { type: 'object', additionalProperties: false } } },
        },
      },
    },
  });
  const withLongKey = (keyLength: number, members: number) => ({
    plans: [{ metadata: { ['K'.repeat(keyLength)]: Object.fromEntries(Array.from({ length: members }, (_, i) => [`u${i}`, 1])) } }],
  });

  it.each([100_000, 900_000])('a %i-character key holding 1 500 unknown members: short properties, a short message', (keyLength) => {
    const e = refusal(plans, withLongKey(keyLength, 1_500));
    expect(e.details.length).toBeLessThanOrEqual(REPORTED_ERRORS + 1);
    for (const d of e.details) expect(d.property.length).toBeLessThanOrEqual(REPORTED_PROPERTY_CHARS);
    // The property keeps its start and end: where it stands and the member named.
    expect(e.details[0]).toEqual({ property: expect.stringMatching(/^plans\.0\.metadata\.K+…K+\.u0$/), error: 'is not allowed' });
    expect(e.message.length).toBeLessThanOrEqual(4 * REPORTED_PROPERTY_CHARS * (REPORTED_ERRORS + 1));
    // Every error would repeat the key: only the first is looked for, and the note says so.
    expect(e.details.at(-1)).toEqual({ property: 'body', error: expect.stringContaining('more than its first error') });
  });

  it('an ordinary long key: the full report, each property shortened', () => {
    const e = refusal(plans, withLongKey(1_000, 3));
    expect(e.details.map((d) => d.property.length)).toEqual([REPORTED_PROPERTY_CHARS, REPORTED_PROPERTY_CHARS, REPORTED_PROPERTY_CHARS]);
    expect(e.details.map((d) => d.property.slice(-3))).toEqual(['.u0', '.u1', '.u2']);
  });

  it('a shortened key never splits an emoji into half a surrogate pair; a clean-text refusal names a long key shortened (final review)', () => {
    for (const length of [150, 151]) {
      const e = refusal(plans, { plans: [{ metadata: { ['😀'.repeat(length)]: { u0: 1 } } }] });
      for (const d of e.details) expect([wellFormed(d.property), wellFormed(d.error)]).toEqual([true, true]);
      expect(wellFormed(e.message)).toBe(true);
    }
    let thrown: DomainError | undefined;
    try {
      assertCleanText({ ['k'.repeat(900_000)]: 'a\u0000' }, 'body');
    } catch (e) {
      thrown = e as DomainError;
    }
    expect(thrown?.details?.[0]?.property.length).toBeLessThanOrEqual(REPORTED_PROPERTY_CHARS);
    expect(thrown?.message.length).toBeLessThan(1_000);
  });

  it('the whole message is bounded', () => {
    const open = compile({ type: 'object', additionalProperties: { type: 'string' } });
    const e = refusal(open, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`${i}${'k'.repeat(5_000)}`, 1])));
    expect(e.details).toHaveLength(REPORTED_ERRORS + 1);
    expect(e.message.length).toBeLessThanOrEqual(REPORTED_MESSAGE_CHARS);
  });

  const unionItems = compile({
    type: 'array',
    items: {
      anyOf: [
        { type: 'string', minLength: 3 },
        { type: 'object', required: ['a'] },
      ],
    },
  });

  it("each item of a list of unions is told its own union's explanation", () => {
    expect(refusal(unionItems, [1, 2, 'ab', {}]).details).toEqual([
      { property: '0', error: 'must be a string or an object' },
      { property: '1', error: 'must be a string or an object' },
      { property: '2', error: 'must NOT have fewer than 3 characters' },
      { property: '3.a', error: 'is required' },
    ]);
  });

  it('a list of 1 999 bad unions: only the first errors are explained, the rest said to be more', () => {
    const e = refusal(unionItems, Array(1_999).fill(1));
    expect(e.details).toHaveLength(REPORTED_ERRORS + 1);
    expect(e.details.slice(0, -1).every((d, i) => d.property === String(i) && d.error === 'must be a string or an object')).toBe(true);
    expect(e.details.at(-1)).toEqual({ property: 'body', error: expect.stringMatching(/^has at least \d+ more errors, left out$/) });
  });

  it('the closing note names each list cut short, and only when a list was', () => {
    const lists = compile({
      type: 'object',
      properties: {
        a: { type: 'array', items: { type: 'string' } },
        b: { type: 'array', items: { type: 'string' } },
        c: { type: 'string' },
      },
    });
    const e = refusal(lists, { a: Array(6_000).fill('ok'), b: Array(60).fill(1), c: 1 });
    expect(e.details.at(-1)).toEqual({
      property: 'body',
      error: `may have more errors, left out: the value is too large to check for every one (only the first ${REPORTED_LIST_ITEMS} items of a, b were checked)`,
    });
    // The same value with no list too long: every error, no note.
    expect(refusal(lists, { a: ['ok'], b: Array(10).fill(1), c: 1 }).details.map((d) => d.property)).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `b.${i}`),
      'c',
    ]);
  });
});
