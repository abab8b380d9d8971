/* fast-check arbitraries from the JSON Schemas the routes validate with (the subset they use). */
import fc from 'fast-check';

type Schema = Record<string, unknown>;

const UUIDS = fc.uuid();

/** Values a schema accepts, mostly; `wild` also gives values of the wrong kind now and then. */
export function arbitraryOf(schema: Schema | undefined, wild = true): fc.Arbitrary<unknown> {
  const valid = validOf(schema ?? {});
  return wild ? fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: hostileValue(), weight: 1 }) : valid;
}

function validOf(s: Schema): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as Schema[]).map(validOf));
  const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : ['object'];
  return fc.oneof(...types.map((t) => typed(t, s)));
}

function typed(type: string, s: Schema): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string': {
      if (s.format === 'uuid') return UUIDS;
      if (s.format === 'email') return fc.emailAddress();
      if (s.format === 'uri') return fc.webUrl();
      if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern));
      return fc.string({ minLength: (s.minLength as number) ?? 0, maxLength: Math.min((s.maxLength as number) ?? 40, 200) });
    }
    case 'integer':
      return fc.integer({ min: (s.minimum as number) ?? -1000, max: (s.maximum as number) ?? 100_000 });
    case 'number':
      return fc.double({ min: (s.minimum as number) ?? -1e6, max: (s.maximum as number) ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validOf((s.items as Schema) ?? {}), {
        minLength: (s.minItems as number) ?? 0,
        maxLength: Math.min((s.maxItems as number) ?? 5, 5),
      });
    default: {
      const props = (s.properties as Record<string, Schema>) ?? {};
      const required = new Set((s.required as string[]) ?? []);
      const entries = Object.entries(props).map(([k, v]) => [k, validOf(v)] as const);
      return fc.record(Object.fromEntries(entries), { requiredKeys: [...required].filter((k) => k in props) });
    }
  }
}

/** The classes of input an attacker tries: huge, odd numbers, NUL, odd UTF-16, wrong kinds. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant('x'.repeat(100_000)),
    fc.constant('\u0000'),
    fc.constant('a\u0000b'),
    fc.constant('\ud800'),
    fc.constant('🙂'.repeat(1000)),
    fc.constant(2 ** 70),
    fc.constant(-1e308),
    fc.constant(1e308),
    fc.constant(-0),
    fc.constant(0.5),
    fc.constant(''),
    fc.constant('not-a-uuid'),
    fc.constant('00000000-0000-0000-0000-000000000000'),
    fc.constant("'; drop table licenses; --"),
    fc.constant('../../etc/passwd'),
    fc.constant({ $gt: '' }),
    fc.constant([]),
    fc.constant({}),
    fc.constant(null),
    fc.constant(true),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
}
