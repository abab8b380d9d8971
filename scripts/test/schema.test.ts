import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateToLatest, openDatabase } from '@tollgate/adapter-postgres';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { generateSchema, SCHEMA_FILE } = require('../generate-schema.js');

describe('generated database schema (kysely-codegen)', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'schema-'));
  const copy = (edit: (s: string) => string) => {
    const file = path.join(tmp, `schema-${Math.random().toString(36).slice(2)}.ts`);
    fs.writeFileSync(file, edit(fs.readFileSync(SCHEMA_FILE, 'utf8')));
    return file;
  };

  it('matches what the migrations give (the committed file is current)', async () => {
    await expect(generateSchema({ openDatabase, migrateToLatest, outFile: copy((s) => s), check: true })).resolves.toBeUndefined();
  });

  it('fails the check when the file has drifted from the migrations', async () => {
    const stale = copy((s) => s.replace(/^\s*locked_until: Date \| null;\n/m, ''));
    await expect(generateSchema({ openDatabase, migrateToLatest, outFile: stale, check: true })).rejects.toThrow();
  });
});
