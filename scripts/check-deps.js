#!/usr/bin/env node
// Dependency-direction check (DESIGN.md section 1): the core package may import only its own files
// and Node's standard library, and may declare no runtime dependency. `npm run build` runs this first,
// so a forbidden import fails the build.
//   node scripts/check-deps.js [packageDir]   (default: packages/core)
const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');

const builtins = new Set(builtinModules);
const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

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

module.exports = { checkPackage, isAllowed };

if (require.main === module) {
  const target = path.resolve(process.argv[2] || path.join(__dirname, '..', 'packages', 'core'));
  const problems = checkPackage(target);
  if (problems.length) {
    console.error(`dependency check failed for ${path.relative(process.cwd(), target) || '.'}:`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(`dependency check: ${path.relative(process.cwd(), target) || '.'} imports only Node's standard library`);
}
