// Tests never reach the network: only loopback is allowed (supertest, the local PostgreSQL server).
const nock = require('nock');
nock.disableNetConnect();
nock.enableNetConnect((host) => /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(host));
