/**
 * An example value made from a JSON Schema, for the OpenAPI documents: every operation shows one,
 * and an example made from the schema cannot drift from it (the OpenAPI test validates each example
 * against its schema). A route may give a hand-written one instead.
 */

const EXAMPLE_UUID = '3f1c2b9e-8a47-4d2b-9c3e-5b7a1d2e4f60';
const EXAMPLE_DATE = '2026-01-15T09:30:00.000Z';

/** Values for the patterns the schemas use (anything else: the schema should carry an `example`). */
const PATTERN_EXAMPLES: [RegExp, string][] = [
  [/^\^\\d\{4\}/, EXAMPLE_DATE],
  [/^\^\[A-Za-z\]\{3\}\$$/, 'EUR'],
  [/^\^\(\[A-Z\]\{3\}\|\[a-z\]\{3\}\)\$$/, 'EUR'],
  [/^\^\[a-z0-9_\]\+\$$/, 'api_calls'],
  [/^\^\(\[0-9\]\+\|inf\)\$$/, 'inf'],
  [/^\^\[0-9a-f\]\+\$$/, '3045022100ab'],
  [/^\^\(100\|/, '25'],
  [/^\^\[1-9\]/, '1'],
];

type S = Record<string, unknown>;

export function exampleOf(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as S;
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null) ?? null;
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (branches) {
    const first = branches.find((b) => (b as S).type !== 'null') ?? branches[0];
    return exampleOf(first);
  }
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'null') : s.type;
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = (s.required ?? []) as string[];
      const names = required.length ? required : Object.keys(props).slice(0, (s.minProperties as number) ?? 0);
      return Object.fromEntries(names.map((n) => [n, exampleOf(props[n] ?? {})]));
    }
    case 'array':
      return Array.from({ length: Math.max(1, (s.minItems as number) ?? 1) }, () => exampleOf(s.items ?? {}));
    case 'string':
      return stringExample(s);
    case 'integer':
    case 'number':
      return (s.minimum as number) ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

function stringExample(s: S): string {
  if (s.format === 'uuid') return EXAMPLE_UUID;
  if (s.format === 'date-time') return EXAMPLE_DATE;
  if (s.format === 'uri') return 'https://example.com/';
  if (typeof s.pattern === 'string') {
    const known = PATTERN_EXAMPLES.find(([re]) => re.test(s.pattern as string));
    if (known) return known[1];
  }
  const min = (s.minLength as number) ?? 0;
  return 'example'.padEnd(min, 'x');
}
