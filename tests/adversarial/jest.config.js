// The adversarial suite: black-box tests against built server processes (npm run build first) on
// a PostgreSQL server (TEST_DATABASE_URL). Suites run one at a time: each starts its own servers.
const path = require('node:path');

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      require.resolve('@swc/jest'),
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  setupFiles: [path.join(__dirname, '../../jest.setup.js')],
  maxWorkers: 1,
  testTimeout: 300_000,
};
