// One nock for every test file of a jest worker. nock patches Node's http module, which all test
// files of a worker share, while jest gives each file its own module registry; a second nock
// instance would leave the first one answering (with none of the new file's interceptors). So the
// first instance is kept on the shared http module and handed to every later file.
const http = require('node:http');
const path = require('node:path');

const KEY = Symbol.for('tollgate.test.nock');
if (!http[KEY]) http[KEY] = require(path.join(__dirname, 'node_modules', 'nock', 'index.js'));
module.exports = http[KEY];
