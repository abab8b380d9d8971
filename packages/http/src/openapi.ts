import { exampleOf } from './examples';
import { pathParams, type ResponseSpec, type Route } from './routes';

/** What a generation's OpenAPI document says beyond its routes. */
export interface OpenApiInfo {
  title: string;
  version: string;
  /** How keys are sent. */
  auth: 'x-api-key' | 'bearer';
  /** The generation's error body, for 4xx answers. */
  errorSchema: object;
  /** Header parameters every operation takes (v1: `version`; catalog writes: `idempotency-key`). */
  headers?: (route: Route) => object[];
}

/** The query parameter names of a route's query schema. */
const queryNames = (r: Route): string[] => Object.keys((r.query as { properties?: object } | undefined)?.properties ?? {});

/**
 * An OpenAPI 3.1 document derived from a generation's route table: one entry per route, with its
 * parameters, body schema and success schema (the same schemas that validate requests and that the
 * tests check responses against).
 */
export function openApiDocument(routes: Route[], info: OpenApiInfo): Record<string, unknown> {
  const security =
    info.auth === 'bearer'
      ? { BearerAuth: { type: 'http', scheme: 'bearer' } }
      : { ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [
      ...pathParams(r.path).map((name) => {
        const schema = r.textParams?.includes(name) ? { type: 'string' } : { type: 'string', format: 'uuid' };
        return { name, in: 'path', required: true, schema, example: exampleOf(schema) };
      }),
      ...(info.headers?.(r) ?? []),
      ...queryNames(r).map((name) => ({
        name,
        in: 'query',
        required: ((r.query as { required?: string[] }).required ?? []).includes(name),
        schema: (r.query as { properties: Record<string, object> }).properties[name],
      })),
    ];
    const errors = { description: 'error', content: { 'application/json': { schema: info.errorSchema } } };
    paths[path] ??= {};
    const success = (spec: ResponseSpec, example?: unknown) =>
      spec.schema
        ? {
            description: spec.description ?? 'success',
            content: { [spec.contentType ?? 'application/json']: { schema: spec.schema, example: example ?? exampleOf(spec.schema) } },
          }
        : { description: spec.description ?? 'success' };
    paths[path][r.method] = {
      operationId: r.operationId,
      tags: [r.tag.name],
      summary: r.summary,
      description: r.description,
      ...(r.scope
        ? { security: [Object.fromEntries(Object.keys(security).map((k) => [k, []]))], 'x-scope': `${r.scope[0]}:${r.scope[1]}` }
        : { security: [] }),
      parameters,
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: r.body, example: exampleOf(r.body) } } } }
        : {}),
      responses: {
        [r.response.status]: success(r.response, r.example),
        ...Object.fromEntries((r.otherResponses ?? []).map((spec) => [spec.status, success(spec)])),
        400: { ...errors, description: 'bad input' },
        ...(r.scope
          ? {
              401: { ...errors, description: 'no, unknown or revoked key' },
              403: { ...errors, description: 'missing scope, or a record this key cannot see' },
            }
          : {}),
        404: { ...errors, description: 'unknown path' },
      },
    };
  }
  const tags = new Map(routes.map((r) => [r.tag.name, r.tag.description]));
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    tags: [...tags].map(([name, description]) => ({ name, description })),
    components: { securitySchemes: security },
    security: [Object.fromEntries(Object.keys(security).map((k) => [k, []]))],
    paths,
  };
}
