// Interceptors a test file left behind must not answer the next file's requests (see jest.nock.js).
const nock = require('nock');
afterAll(() => {
  nock.cleanAll();
});
