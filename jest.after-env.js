// Interceptors a test file left behind must not answer the next file's requests (see jest.nock.js).
const nock = require('nock');
afterAll(() => {
  nock.cleanAll();
});

// The response audit (packages/http/src/response-audit.ts): every answer a generation router gives
// during a test is checked against its route's declared schema (errors against the generation's
// error schema); a test that received a body its route does not declare fails.
const SINK = Symbol.for('tollgate.responseAudit');
const sink = { violations: [] };
globalThis[SINK] = sink;
const failOnViolations = () => {
  const found = sink.violations.splice(0);
  if (found.length === 0) return;
  const lines = found.slice(0, 5).map((v) => `${v.route} answered ${v.status}: ${v.problem}\n  ${v.body}`);
  throw new Error(`responses that do not match their route's schema (${found.length}):\n${lines.join('\n')}`);
};
afterEach(failOnViolations);
afterAll(failOnViolations);
