#!/usr/bin/env node
// The registry mirror here serves no other platform's native packages (e.g. `npm view
// @swc/core-darwin-arm64` is 404), so npm writes lockfiles without them and `npm ci` then calls the
// lockfile out of sync. This adds the missing optional entries (version, os/cpu, optional) from the
// installed packages' manifests, as npm would on an unfiltered registry. Run after `npm install`.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const lockPath = path.join(root, 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
let added = 0;

for (const [key, entry] of Object.entries(lock.packages)) {
  if (!key.startsWith('node_modules/') || entry.link) continue;
  const manifestPath = path.join(root, key, 'package.json');
  if (!fs.existsSync(manifestPath)) continue;
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const optional = manifest.optionalDependencies || {};
  if (Object.keys(optional).length === 0) continue;
  entry.optionalDependencies = { ...optional, ...(entry.optionalDependencies || {}) };
  for (const [name, spec] of Object.entries(optional)) {
    const nested = `${key}/node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    const version = String(spec).replace(/^[\^~=]/, '');
    const guess = { version, optional: true };
    if (entry.dev) guess.dev = true;
    const m = /-(darwin|win32|linux|android|freebsd|openbsd|sunos|aix)-?([a-z0-9]+)?/.exec(name);
    if (m) {
      guess.os = [m[1]];
      const cpu = {
        x64: 'x64',
        64: 'x64',
        arm64: 'arm64',
        ia32: 'ia32',
        arm: 'arm',
        ppc64: 'ppc64',
        s390x: 's390x',
        riscv64: 'riscv64',
        loong64: 'loong64',
      }[m[2] || ''];
      if (cpu) guess.cpu = [cpu];
    }
    lock.packages[hoisted] = guess;
    added++;
  }
}

const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional package entr${added === 1 ? 'y' : 'ies'}`);
