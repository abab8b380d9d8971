// nock patches Node's http module, which every test file in a worker shares; each file has its own
// nock instance. Restoring at the end of a file lets the next file's instance take over, otherwise
// the first file's (empty) instance would keep answering.
const nock = require('nock');
afterAll(() => {
  nock.cleanAll();
  nock.restore();
});
