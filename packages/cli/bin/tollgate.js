#!/usr/bin/env node
// The `tollgate` command as npm links it (committed, so `npm install` always links it): runs the
// built CLI, building the workspace first when a fresh clone has not been built yet. The build's
// output goes to stderr, so `--json` output on stdout stays clean.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const built = path.join(__dirname, '..', 'dist', 'bin.js');
const root = path.join(__dirname, '..', '..', '..');
/** Migrations in the sources the build does not have (a pull without a build: `migrate` would say "up to date"). */
function unbuiltMigrations() {
  const count = (dir, ext) => {
    try {
      return fs.readdirSync(dir).filter((f) => f.endsWith(ext) && !f.endsWith('.d.ts')).length;
    } catch {
      return 0;
    }
  };
  const migrations = path.join(root, 'packages', 'adapter-postgres');
  return count(path.join(migrations, 'src', 'migrations'), '.ts') - count(path.join(migrations, 'dist', 'migrations'), '.js');
}
const missing = fs.existsSync(built) ? unbuiltMigrations() : 0;
if (!fs.existsSync(built) || missing > 0) {
  console.error(
    missing > 0
      ? `tollgate: the build is older than the sources (${missing} migration(s) not built), building first (npm run build) ...`
      : 'tollgate: not built yet, building first (npm run build) ...',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0 || !fs.existsSync(built)) {
    console.error('tollgate: the build failed; run `npm run build` in the repository and read its errors');
    process.exit(1);
  }
}
require(built);
