// One jest run over every workspace: tests import sibling packages from their TypeScript sources
// (no build needed), transpiled by swc. See docs/decisions.md "Module format and jest".
const fs = require('node:fs');
const path = require('node:path');

const moduleNameMapper = {};
for (const group of ['packages', 'apps']) {
  const base = path.join(__dirname, group);
  if (!fs.existsSync(base)) continue;
  for (const dir of fs.readdirSync(base)) {
    const pkgFile = path.join(base, dir, 'package.json');
    if (!fs.existsSync(pkgFile)) continue;
    const name = JSON.parse(fs.readFileSync(pkgFile, 'utf8')).name;
    moduleNameMapper[`^${name}$`] = `<rootDir>/${group}/${dir}/src/index.ts`;
    moduleNameMapper[`^${name}/(.*)$`] = `<rootDir>/${group}/${dir}/src/$1/index.ts`;
  }
}

moduleNameMapper['^nock$'] = '<rootDir>/jest.nock.js';

module.exports = {
  testEnvironment: 'node',
  // The shared nock (jest.nock.js) keeps objects from the first test file of a worker alive for the
  // later ones; jest's globals cleanup would delete them under it.
  testEnvironmentOptions: { globalsCleanup: 'off' },
  roots: ['<rootDir>/packages', '<rootDir>/apps', '<rootDir>/scripts'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleNameMapper,
  globalSetup: '<rootDir>/jest.global-setup.js',
  setupFiles: ['<rootDir>/jest.setup.js'],
  setupFilesAfterEnv: ['<rootDir>/jest.after-env.js'],
  // Suites named *.server.test.ts need a PostgreSQL server: collected only when TEST_DATABASE_URL says where.
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/fixtures/', ...(process.env.TEST_DATABASE_URL ? [] : ['\\.server\\.test\\.ts$'])],
  testTimeout: 30000,
  // Each test file's embedded databases (PGlite, ~400 MB of WebAssembly memory apiece) stay reachable
  // from the file's module registry after it ends, so one process running file after file grew past
  // 5 GB. A fresh worker per file (0: always restart; a byte limit would not do, since jest compares
  // it with the heap, and WebAssembly memory lies outside it) keeps every test process near the
  // needs of its one file. Setting it also makes jest use a worker under --maxWorkers=1.
  workerIdleMemoryLimit: 0,
};
