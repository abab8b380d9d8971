import type { ValidateFunction } from 'ajv';
import type { Answer, Route } from './routes';
import { ajv } from './validation';

/**
 * The response audit: while a sink is installed (the test runs install one, jest.after-env.js),
 * every answer of every generation router is checked against what its route declares (the body
 * schema of its status) and every error body against the generation's error schema; a mismatch is
 * recorded, and the test that received it fails. Outside tests no sink is installed and the cost is
 * one property read per response.
 */
export interface ResponseViolation {
  /** `GET /products/:uuid` (or `error` for an error body). */
  route: string;
  status: number;
  problem: string;
  body: string;
}

export interface ResponseAuditSink {
  violations: ResponseViolation[];
}

const SINK = Symbol.for('tollgate.responseAudit');

type WithSink = { [SINK]?: ResponseAuditSink };

/** The installed sink, if any. */
export const responseAuditSink = (): ResponseAuditSink | undefined => (globalThis as WithSink)[SINK];

/** Installs a sink (undefined: none); answers the one it replaces. */
export function installResponseAudit(sink: ResponseAuditSink | undefined): ResponseAuditSink | undefined {
  const before = responseAuditSink();
  (globalThis as WithSink)[SINK] = sink;
  return before;
}

const compiled = new WeakMap<object, ValidateFunction>();
const validatorOf = (schema: object): ValidateFunction => {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(schema, v);
  }
  return v;
};

const excerpt = (body: unknown) => JSON.stringify(body)?.slice(0, 1000) ?? 'undefined';

function check(sink: ResponseAuditSink, name: string, status: number, schema: object, body: unknown): void {
  const validate = validatorOf(schema);
  if (!validate(body)) sink.violations.push({ route: name, status, problem: ajv.errorsText(validate.errors), body: excerpt(body) });
}

const nameOf = (r: Pick<Route, 'method' | 'path'>) => `${r.method.toUpperCase()} ${r.path}`;

/** Streams a list's batches on while checking each item against the list's item schema. */
async function* checkedBatches(
  sink: ResponseAuditSink,
  name: string,
  status: number,
  schema: object,
  batches: AsyncIterable<unknown[]>,
): AsyncGenerator<unknown[]> {
  const items = (schema as { type?: string; items?: object }).type === 'array' ? (schema as { items?: object }).items : undefined;
  if (!items) sink.violations.push({ route: name, status, problem: 'a streamed list needs an array schema', body: '' });
  for await (const batch of batches) {
    if (items) for (const item of batch) check(sink, name, status, items, item);
    yield batch;
  }
}

/**
 * A route's answer, checked when a sink is installed: a status the route does not declare, a body
 * where none is declared (or none where one is), and a body its schema refuses are violations.
 * Error statuses (4xx, 5xx) are checked against the generation's error schema.
 */
export function auditAnswer(r: Route, answer: Answer, errorSchema: object | undefined): Answer {
  const sink = responseAuditSink();
  if (!sink) return answer;
  const name = nameOf(r);
  if (answer.status >= 400) {
    if (errorSchema) check(sink, name, answer.status, errorSchema, answer.body);
    return answer;
  }
  const spec = [r.response, ...(r.otherResponses ?? [])].find((s) => s.status === answer.status);
  const violation = (problem: string) => sink.violations.push({ route: name, status: answer.status, problem, body: excerpt(answer.body) });
  if (!spec) {
    violation(`status ${answer.status} is not one the route declares`);
    return answer;
  }
  const hasBody = answer.body !== undefined || answer.stream !== undefined || answer.text !== undefined;
  if (!spec.schema) {
    if (hasBody) violation('a body where the route declares none');
    return answer;
  }
  if (!hasBody) violation('no body where the route declares one');
  else if (answer.stream) return { ...answer, stream: checkedBatches(sink, name, answer.status, spec.schema, answer.stream) };
  else if (answer.text) check(sink, name, answer.status, spec.schema, answer.text.content);
  else check(sink, name, answer.status, spec.schema, answer.body);
  return answer;
}

/** A body answered outside a generation router (the check's fast path), checked when a sink is installed. */
export function auditBody(name: string, status: number, schema: object, body: unknown): void {
  const sink = responseAuditSink();
  if (sink) check(sink, name, status, schema, body);
}

/** An error body, checked against the generation's error schema when a sink is installed. */
export function auditError(errorSchema: object | undefined, status: number, body: unknown): void {
  const sink = responseAuditSink();
  if (sink && errorSchema) check(sink, 'error', status, errorSchema, body);
}
