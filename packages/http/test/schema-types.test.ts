/* Handler types are read from the request schemas (one source). These checks run at compile time
   (`npm run lint` type-checks the tests): a schema change that the handler's type no longer
   follows fails there. */
import { bodySchema, querySchema, route, type BodyOf, type QueryOf } from '../src';

const body = bodySchema({
  type: 'object',
  properties: {
    name: { type: 'string' },
    count: { type: ['integer', 'null'] },
    mode: { enum: ['now', 'end'] },
    tags: { type: 'array', items: { type: 'string' } },
    nested: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] },
  },
  required: ['name'],
});
const query = querySchema({ expand: { type: 'string' }, when: { enum: ['now', 'end'] } }, ['when']);

type Body = BodyOf<typeof body>;
type Query = QueryOf<typeof query>;

describe('types read from request schemas', () => {
  it('type a body from its schema: required members, nullable, enums, arrays, nested objects', () => {
    const full: Body = { name: 'n', count: null, mode: 'end', tags: ['a'], nested: { on: true } };
    const least: Body = { name: 'n' };
    // @ts-expect-error name is required
    const missing: Body = { count: 1 };
    // @ts-expect-error mode is one of its enum values
    const wrongEnum: Body = { name: 'n', mode: 'later' };
    // @ts-expect-error count is a number or null
    const wrongType: Body = { name: 'n', count: '1' };
    expect([full, least, missing, wrongEnum, wrongType]).toHaveLength(5);
  });

  it('type a query from its schema: strings, enum literals, required members', () => {
    const q: Query = { when: 'now' };
    // @ts-expect-error when is required
    const missing: Query = { expand: 'x' };
    // @ts-expect-error when is one of its enum values
    const wrong: Query = { when: 'later' };
    expect([q, missing, wrong]).toHaveLength(3);
  });

  it('hand the handler those types', () => {
    const r = route({
      method: 'post',
      path: '/x',
      operationId: 'x',
      summary: 'x',
      description: 'a typed route',
      query,
      body,
      response: { status: 204 },
      handle: ({ body: b, query: q }) => {
        const name: string = b.name;
        const when: 'now' | 'end' = q.when;
        // @ts-expect-error not a member of the body schema
        void b.other;
        return { status: name && when ? 204 : 204 };
      },
    });
    expect(r.operationId).toBe('x');
  });
});
