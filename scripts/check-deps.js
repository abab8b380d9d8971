#!/usr/bin/env node
// Dependency-direction check (DESIGN.md section 1). `npm run build` and `npm run lint` run it first,
// so a forbidden import fails both.
//   - core imports only its own files and Node's standard library, and declares no dependency;
//   - adapters import no other adapter, no app, and neither http nor runtime;
//   - apps import no adapter, and runtime only from their `main.ts` (the top floor);
//   - http imports neither runtime, nor an adapter, nor an app;
//   - inversify and reflect-metadata appear only in packages/runtime;
//   - core's inner layers point inwards (CORE_LAYERS): domain holds rules over the model, support is
//     plain helpers, ports speak model and domain types, use cases may use all of them;
//   - no import circle: between files of any package (`import type` aside), nor between packages.
//   node scripts/check-deps.js            (the whole house of this repository)
//   node scripts/check-deps.js ROOT       (the house rooted at ROOT: packages/*, apps/*)
//   node scripts/check-deps.js --package DIR   (the core rules on one package)
const fs = require('node:fs');
const path = require('node:path');
const { builtinModules } = require('node:module');

const builtins = new Set(builtinModules);
// A side-effect import's module name has no blanks (so prose like "the import's refusal ... file'" is no import).
const IMPORT_RE =
  /(?:^|[\s;])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*['"]([^'"\s]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

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

/**
 * What each folder (or top-level file) of core's src may import of core. A folder not named here
 * is an outer one (like usecases): it may import the inner layers, and no inner layer may import it.
 * `testing` and the root `index.ts` may import anything.
 */
const CORE_LAYERS = {
  errors: [],
  model: ['model'],
  support: ['support', 'errors', 'model'],
  domain: ['domain', 'support', 'errors', 'model'],
  ports: ['ports', 'domain', 'model'],
  views: ['views', 'support', 'model'],
  usecases: ['usecases', 'ports', 'domain', 'support', 'errors', 'model', 'views'],
};
const ANY_LAYER = new Set(['testing', 'index']);

/** The layer of a file of core's src: its top folder, or its own name when at the top. */
const layerOf = (srcDir, file) =>
  path
    .relative(srcDir, file)
    .split(path.sep)[0]
    .replace(/\.(ts|tsx|js|mjs|cjs)$/, '');

/** The file a relative import names (`./x` -> x.ts or x/index.ts), or undefined when it names none. */
function resolveRelative(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}.js`, path.join(base, 'index.ts'), path.join(base, 'index.js')])
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  return undefined;
}

/** The layer rules over core's src: an inner layer importing an outer one is an upward import. */
function checkCoreLayers(dir) {
  const problems = [];
  const srcDir = path.resolve(dir);
  for (const file of sourceFiles(srcDir)) {
    const from = layerOf(srcDir, file);
    if (ANY_LAYER.has(from)) continue;
    const allowed = CORE_LAYERS[from] || [...Object.keys(CORE_LAYERS), from];
    for (const spec of imports(file)) {
      if (!spec.startsWith('.')) continue;
      const target = resolveRelative(file, spec);
      if (!target || !target.startsWith(srcDir + path.sep)) continue;
      const to = layerOf(srcDir, target);
      if (to !== from && (to === 'testing' || !allowed.includes(to)))
        problems.push(
          `${path.relative(process.cwd(), file)}: imports '${spec}' (${to}), an upward import: ${from} may import only ${allowed.join(', ') || 'nothing of core'}`,
        );
    }
  }
  return problems;
}

/** Every circle in a directed graph (its strongly connected components of more than one node, or a node naming itself). */
function circles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  // Iterative Tarjan: a deep import chain must not overflow the call stack.
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work = [[root, 0]];
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      if (i === 0) {
        index.set(v, next);
        low.set(v, next);
        next++;
        stack.push(v);
        onStack.add(v);
      }
      const edges = graph.get(v) || [];
      if (i < edges.length) {
        frame[1]++;
        const w = edges[i];
        if (!index.has(w)) work.push([w, 0]);
        else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const component = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || edges.includes(v)) found.push(component.reverse());
      }
    }
  }
  return found;
}

/**
 * Import circles between the files under `srcDirs` (relative imports). `import type` is left out:
 * it is erased by the compiler, so it cannot make modules load one another in a circle.
 */
function fileCircles(srcDirs, name = (f) => path.relative(process.cwd(), f)) {
  const graph = new Map();
  for (const dir of srcDirs)
    for (const file of sourceFiles(path.resolve(dir)))
      graph.set(
        file,
        imports(file, { runtimeOnly: true })
          .filter((spec) => spec.startsWith('.'))
          .map((spec) => resolveRelative(file, spec))
          .filter(Boolean),
      );
  return circles(graph).map((c) => `import circle: ${c.map(name).join(' -> ')} -> ${name(c[0])}`);
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
  problems.push(...checkCoreLayers(path.join(pkgDir, 'src')));
  problems.push(...fileCircles([path.join(pkgDir, 'src')]));
  return problems;
}

function imports(file, { runtimeOnly = false } = {}) {
  return [...fs.readFileSync(file, 'utf8').matchAll(IMPORT_RE)]
    .filter((m) => !runtimeOnly || !/^[\s;(]*(import|export)\s+type\s/.test(m[0]))
    .map((m) => m[1] || m[2] || m[3] || m[4]);
}
const pkgName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
const subdirs = (dir) =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(dir, e.name))
    : [];

/** The rules of the house over every package under ROOT/packages and ROOT/apps. */
function checkHouse(given) {
  const problems = [];
  const root = path.resolve(given);
  const core = path.join(root, 'packages', 'core');
  if (fs.existsSync(core)) problems.push(...checkPackage(core));
  const rel = (f) => path.relative(root, f);
  const dirs = [...subdirs(path.join(root, 'packages')), ...subdirs(path.join(root, 'apps'))];
  const packageName = (dir) => {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) return JSON.parse(fs.readFileSync(manifest, 'utf8')).name;
    return `@tollgate/${rel(dir).startsWith('apps') ? 'app-' : ''}${path.basename(dir)}`;
  };
  const packageImports = new Map(dirs.map((dir) => [packageName(dir), new Set()]));
  for (const dir of dirs) {
    const kind = rel(dir).startsWith('apps') ? 'app' : path.basename(dir).startsWith('adapter-') ? 'adapter' : path.basename(dir);
    if (!fs.existsSync(path.join(dir, 'src'))) continue;
    for (const file of sourceFiles(path.join(dir, 'src'))) {
      for (const spec of imports(file)) {
        const name = pkgName(spec);
        const where = `${rel(file)}: imports '${spec}'`;
        if ((name === 'inversify' || name === 'reflect-metadata') && kind !== 'runtime')
          problems.push(`${where}: inversify belongs in packages/runtime only`);
        if (!name.startsWith('@tollgate/')) continue;
        if (name !== packageName(dir)) packageImports.get(packageName(dir)).add(name);
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
  // Core's own circles are reported by checkPackage above.
  const srcDirs = dirs.filter((d) => d !== core && fs.existsSync(path.join(d, 'src'))).map((d) => path.join(d, 'src'));
  problems.push(...fileCircles(srcDirs, rel));
  const packageGraph = new Map([...packageImports].map(([name, targets]) => [name, [...targets].filter((t) => packageImports.has(t))]));
  for (const circle of circles(packageGraph)) problems.push(`package circle: ${[...circle, circle[0]].join(' -> ')}`);
  return problems;
}

module.exports = { checkPackage, checkHouse, isAllowed, CORE_LAYERS };

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
