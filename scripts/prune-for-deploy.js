#!/usr/bin/env node
// Copies what a production install needs into DIR (the Dockerfile's build stage): the root
// package.json and lockfile, and for every workspace its package.json with its compiled `dist`,
// `bin` and `assets` folders. Test-only workspaces keep their package.json only (npm ci checks the
// lockfile against every workspace).   node scripts/prune-for-deploy.js DIR
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const target = path.resolve(process.argv[2] ?? 'image-root');
fs.rmSync(target, { recursive: true, force: true });
fs.mkdirSync(target, { recursive: true });
for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(root, f), path.join(target, f));
const workspaces = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces;
let copied = 0;
for (const pattern of workspaces) {
  const base = path.join(root, pattern.replace(/\/\*$/, ''));
  if (!fs.existsSync(base)) continue;
  for (const dir of fs.readdirSync(base)) {
    const from = path.join(base, dir);
    if (!fs.existsSync(path.join(from, 'package.json'))) continue;
    const to = path.join(target, path.relative(root, from));
    fs.mkdirSync(to, { recursive: true });
    fs.copyFileSync(path.join(from, 'package.json'), path.join(to, 'package.json'));
    if (pattern.startsWith('tests')) continue;
    for (const sub of ['dist', 'bin', 'assets']) {
      if (fs.existsSync(path.join(from, sub))) fs.cpSync(path.join(from, sub), path.join(to, sub), { recursive: true });
    }
    copied++;
  }
}
console.log(`prune-for-deploy: ${copied} packages into ${path.relative(process.cwd(), target) || '.'}`);
