#!/usr/bin/env node
// Dependency-direction check (DESIGN.md section 1). `npm run build` and `npm run lint` run it first,
// so a forbidden import fails both.
//   - core imports only its own files and Node's standard library, and declares no dependency;
//   - adapters import no other adapter, no app, and neither http nor runtime;
//   - apps import no adapter, and runtime only from their `main.ts` (the top floor);
//   - http imports neither runtime, nor an adapter, nor an app;
//   - inversify and reflect-metadata appear only in packages/runtime.
//   node scripts/check-deps.js            (the whole house of this repository)
//   node scripts/check-deps.js ROOT       (the house rooted at ROOT: packages/*, apps/*)
//   node scripts/check-deps.js --package DIR   (the core rules on one package)
const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');

const builtins = new Set(builtinModules);
const IMPORT_RE =
  /(?:^|[\s;])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function isAllowed(spec) {
  if (spec.startsWith('.') || spec.startsWith('/')) return true;
  if (spec.startsWith('node:')) return true;
  return builtins.has(spec.split('/')[0]);
}

function* sourceFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') yield* sourceFiles(full);
    } else if (/\.(ts|tsx|js|mjs|cjs)$/.test(entry.name)) {
      yield full;
    }
  }
}

function checkPackage(pkgDir) {
  const problems = [];
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    const names = Object.keys(pkg[field] || {});
    if (names.length) problems.push(`${path.join(pkgDir, 'package.json')}: ${field} must be empty, has ${names.join(', ')}`);
  }
  for (const file of sourceFiles(path.join(pkgDir, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] || m[2] || m[3] || m[4];
      if (!isAllowed(spec)) problems.push(`${file}: imports '${spec}', which is not Node's standard library`);
    }
  }
  return problems;
}

const imports = (file) => [...fs.readFileSync(file, 'utf8').matchAll(IMPORT_RE)].map((m) => m[1] || m[2] || m[3] || m[4]);
const pkgName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
const subdirs = (dir) =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(dir, e.name))
    : [];

/** The rules of the house over every package under ROOT/packages and ROOT/apps. */
function checkHouse(root) {
  const problems = [];
  const core = path.join(root, 'packages', 'core');
  if (fs.existsSync(core)) problems.push(...checkPackage(core));
  const rel = (f) => path.relative(root, f);
  for (const dir of [...subdirs(path.join(root, 'packages')), ...subdirs(path.join(root, 'apps'))]) {
    const kind = rel(dir).startsWith('apps') ? 'app' : path.basename(dir).startsWith('adapter-') ? 'adapter' : path.basename(dir);
    if (!fs.existsSync(path.join(dir, 'src'))) continue;
    for (const file of sourceFiles(path.join(dir, 'src'))) {
      for (const spec of imports(file)) {
        const name = pkgName(spec);
        const where = `${rel(file)}: imports '${spec}'`;
        if ((name === 'inversify' || name === 'reflect-metadata') && kind !== 'runtime')
          problems.push(`${where}: inversify belongs in packages/runtime only`);
        if (!name.startsWith('@tollgate/')) continue;
        const target = name.slice('@tollgate/'.length);
        if (kind === 'adapter' && target !== 'core') problems.push(`${where}: an adapter imports only @tollgate/core`);
        if (kind === 'app' && target.startsWith('adapter-')) problems.push(`${where}: apps never import adapters`);
        if (kind === 'app' && target === 'runtime' && path.basename(file) !== 'main.ts')
          problems.push(`${where}: apps take typed services; only main.ts builds the runtime`);
        if (kind === 'http' && (target === 'runtime' || target.startsWith('adapter-') || target.startsWith('app-')))
          problems.push(`${where}: http never imports runtime, adapters or apps`);
      }
    }
  }
  return problems;
}

module.exports = { checkPackage, checkHouse, isAllowed };

if (require.main === module) {
  const args = process.argv.slice(2);
  const single = args[0] === '--package';
  const target = path.resolve(single ? args[1] : args[0] || path.join(__dirname, '..'));
  const problems = single ? checkPackage(target) : checkHouse(target);
  if (problems.length) {
    console.error(`dependency check failed for ${path.relative(process.cwd(), target) || '.'}:`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(`dependency check: ${path.relative(process.cwd(), target) || '.'} keeps the rules of the house`);
}
