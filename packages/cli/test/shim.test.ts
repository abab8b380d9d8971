import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

// The committed `tollgate` bin shim: npm links it at install time (it exists before any build), it
// runs the built CLI, and in a fresh clone it builds first, keeping stdout for the command's output.
const SHIM = path.join(__dirname, '..', 'bin', 'tollgate.js');

/** A repository layout like ours: <root>/packages/cli/bin/tollgate.js, the build writes dist/bin.js. */
function layout(buildScript: string): { root: string; shim: string; built: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-shim-'));
  const cli = path.join(root, 'packages', 'cli');
  fs.mkdirSync(path.join(cli, 'bin'), { recursive: true });
  fs.copyFileSync(SHIM, path.join(cli, 'bin', 'tollgate.js'));
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'shim-test', private: true, scripts: { build: buildScript } }));
  return { root, shim: path.join(cli, 'bin', 'tollgate.js'), built: path.join(cli, 'dist', 'bin.js') };
}

const run = (shim: string, args: string[]) => spawnSync(process.execPath, [shim, ...args], { encoding: 'utf8' });
const writesBin = `node -e "require('fs').mkdirSync('packages/cli/dist',{recursive:true});require('fs').writeFileSync('packages/cli/dist/bin.js','console.log(JSON.stringify(process.argv.slice(2)))')"`;

describe('the tollgate bin shim', () => {
  it('is executable and runs the built CLI with its arguments', () => {
    expect(fs.statSync(SHIM).mode & 0o111).not.toBe(0);
    const { root, shim, built } = layout('exit 1');
    fs.mkdirSync(path.dirname(built), { recursive: true });
    fs.writeFileSync(built, 'console.log(JSON.stringify(process.argv.slice(2)))');
    const r = run(shim, ['keys', 'create', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['keys', 'create', '--json']);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('builds a fresh clone first, with the build output kept off stdout', () => {
    const { root, shim, built } = layout(writesBin);
    expect(fs.existsSync(built)).toBe(false);
    const r = run(shim, ['migrate']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('not built yet');
    expect(JSON.parse(r.stdout)).toEqual(['migrate']);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('builds first when the sources hold migrations the build does not (a pull without a build)', () => {
    const { root, shim, built } = layout(
      `node -e "require('fs').mkdirSync('packages/adapter-postgres/dist/migrations',{recursive:true});require('fs').writeFileSync('packages/adapter-postgres/dist/migrations/b.js','')"`,
    );
    fs.mkdirSync(path.dirname(built), { recursive: true });
    fs.writeFileSync(built, 'console.log(JSON.stringify(process.argv.slice(2)))');
    const migrations = path.join(root, 'packages', 'adapter-postgres');
    fs.mkdirSync(path.join(migrations, 'src', 'migrations'), { recursive: true });
    fs.mkdirSync(path.join(migrations, 'dist', 'migrations'), { recursive: true });
    for (const f of ['a.ts', 'b.ts']) fs.writeFileSync(path.join(migrations, 'src', 'migrations', f), '');
    fs.writeFileSync(path.join(migrations, 'dist', 'migrations', 'a.js'), '');
    fs.writeFileSync(path.join(migrations, 'dist', 'migrations', 'a.d.ts'), '');
    const r = run(shim, ['migrate']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('older than the sources (1 migration(s) not built)');
    expect(JSON.parse(r.stdout)).toEqual(['migrate']);
    // Built now: the next run does not build again.
    const again = run(shim, ['migrate']);
    expect(again.stderr).toBe('');
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('says to run the build when it fails', () => {
    const { root, shim } = layout('exit 3');
    const r = run(shim, ['migrate']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('run `npm run build`');
    expect(r.stdout).toBe('');
    fs.rmSync(root, { recursive: true, force: true });
  });
});
