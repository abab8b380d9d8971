#!/usr/bin/env node
// Generates packages/adapter-postgres/src/schema.ts (the `Database` interface kysely is typed with)
// from a database migrated from empty: an in-memory PGlite, so no server is needed. With --check,
// fails (exit 1) when the committed file differs from what the migrations give: CI runs that.
// From the command line it needs the built adapter (npm run build).
const path = require('node:path');
const { generate, PostgresDialect } = require('kysely-codegen');

const SCHEMA_FILE = path.join(__dirname, '../packages/adapter-postgres/src/schema.ts');

/** Writes (or with `check`, verifies) `outFile` from the migrations; throws when a check finds it stale. */
async function generateSchema({ openDatabase, migrateToLatest, outFile = SCHEMA_FILE, check = false }) {
  const handle = openDatabase();
  try {
    await migrateToLatest(handle.db);
    await generate({
      db: handle.db,
      dialect: new PostgresDialect(),
      outFile,
      excludePattern: 'kysely_*',
      // pg gives int8 as a number here (adapter-postgres sets the type parser); timestamps as Date.
      typeMapping: { int8: 'number', timestamptz: 'Date' },
      verify: check,
      print: false,
      logger: { debug() {}, info() {}, success() {}, warn() {}, error() {}, log() {} },
    });
  } finally {
    await handle.close();
  }
}

module.exports = { generateSchema, SCHEMA_FILE };

if (require.main === module) {
  const check = process.argv.includes('--check');
  const fileArg = process.argv.indexOf('--file');
  const outFile = fileArg > 0 ? path.resolve(process.argv[fileArg + 1]) : SCHEMA_FILE;
  const { openDatabase, migrateToLatest } = require('../packages/adapter-postgres/dist');
  generateSchema({ openDatabase, migrateToLatest, outFile, check }).then(
    () =>
      console.log(
        check ? `${path.relative(process.cwd(), outFile)} matches the migrations` : `wrote ${path.relative(process.cwd(), outFile)}`,
      ),
    (e) => {
      console.error(e instanceof Error ? e.message : e);
      console.error(`${path.relative(process.cwd(), outFile)} is stale: run \`npm run build && npm run schema\` and commit it`);
      process.exit(1);
    },
  );
}
