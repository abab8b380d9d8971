#!/usr/bin/env node
// Runs the Dockerfile's steps without Docker (Docker is not on the CI machine): each stage gets a
// temporary root folder; COPY (from the build context, honouring .dockerignore, or --from=stage),
// WORKDIR, ENV and RUN are executed as written (RUN with bash in the stage's WORKDIR), then the
// final stage's CMD is started with its ENV, must answer GET /readyz with 200, and must stop on
// SIGTERM with exit code 0. USER is checked to be non-root; HEALTHCHECK's command is run against the
// started server. The base image's own contents (Node 20) are this machine's.
//   node scripts/dockerfile-run.js [--keep]
const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const context = path.join(__dirname, '..');
const keep = process.argv.includes('--keep');

/** Dockerfile instructions: continuation lines joined, comments dropped. */
function instructions(text) {
  const out = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = '';
    const m = /^(\w+)\s+(.*)$/.exec(full);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2] });
  }
  return out;
}

/** .dockerignore patterns as tests on a path relative to the context. */
function ignored() {
  const file = path.join(context, '.dockerignore');
  const patterns = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [];
  const res = patterns.map((p) => {
    const any = p.startsWith('**/');
    const body = (any ? p.slice(3) : p).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
    return new RegExp(`^${any ? '(?:.*/)?' : ''}${body}(?:/.*)?$`);
  });
  return (rel) => res.some((re) => re.test(rel));
}

const jsonArgs = (args) => (args.trim().startsWith('[') ? JSON.parse(args) : ['/bin/sh', '-c', args]);

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function main() {
  const steps = instructions(fs.readFileSync(path.join(context, 'Dockerfile'), 'utf8'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-dockerfile-'));
  const stages = new Map();
  let stage;
  const inStage = (p) => path.join(stage.root, p);
  const resolve = (p) => (path.isAbsolute(p) ? inStage(p) : path.join(stage.workdir, p));
  const isIgnored = ignored();
  for (const { op, args } of steps) {
    console.log(`::: ${op} ${args}`);
    if (op === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.size}`;
      stage = { name, root: path.join(work, name), workdir: '', env: {}, user: 'root', cmd: undefined, healthcheck: undefined };
      fs.mkdirSync(stage.root, { recursive: true });
      stage.workdir = stage.root;
      stages.set(name, stage);
    } else if (op === 'WORKDIR') {
      stage.workdir = resolve(args.trim());
      fs.mkdirSync(stage.workdir, { recursive: true });
    } else if (op === 'ENV') {
      const m = /^(\S+?)[=\s](.*)$/.exec(args.trim());
      stage.env[m[1]] = m[2].replace(/^"|"$/g, '');
    } else if (op === 'COPY') {
      const parts = args.trim().split(/\s+/);
      const from = parts[0].startsWith('--from=') ? parts.shift().slice('--from='.length) : undefined;
      const dest = resolve(parts.pop());
      for (const src of parts) {
        if (from) {
          const source = stages.get(from);
          if (!source) throw new Error(`COPY --from=${from}: no such stage`);
          fs.cpSync(path.join(source.root, src), dest, { recursive: true });
        } else {
          fs.cpSync(path.join(context, src), dest, {
            recursive: true,
            filter: (f) => {
              const rel = path.relative(context, f);
              return rel === '' || !isIgnored(rel.split(path.sep).join('/'));
            },
          });
        }
      }
    } else if (op === 'RUN') {
      const env = { ...process.env, ...stage.env };
      const r = spawnSync('bash', ['-c', args], { cwd: stage.workdir, env, stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`RUN ${args} failed with ${r.status}`);
    } else if (op === 'USER') {
      stage.user = args.trim();
    } else if (op === 'CMD') {
      stage.cmd = jsonArgs(args);
    } else if (op === 'HEALTHCHECK') {
      stage.healthcheck = jsonArgs(args.replace(/^(--\S+\s+)*CMD\s+/, ''));
    } else if (op === 'EXPOSE') {
      stage.expose = Number(args.trim());
    } else {
      throw new Error(`the script does not know ${op}: teach it, or keep the Dockerfile to the instructions it runs`);
    }
  }

  // The final stage: not root, and it starts, gets ready and stops cleanly.
  if (!stage.user || stage.user === 'root' || stage.user === '0') throw new Error('the final stage must run as a non-root USER');
  if (!stage.cmd) throw new Error('the final stage has no CMD');
  const port = await freePort();
  const dataDir = path.join(stage.root, 'data');
  const env = { ...process.env, ...stage.env, PORT: String(port), DATA_DIR: dataDir, LOG_REQUESTS: 'false' };
  delete env.DATABASE_URL;
  console.log(`::: start ${stage.cmd.join(' ')} (port ${port})`);
  const child = spawn(stage.cmd[0], stage.cmd.slice(1), { cwd: stage.workdir, env, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((res) => child.on('exit', (code, signal) => res({ code, signal })));
  let ready = false;
  for (let i = 0; i < 120 && !ready; i++) {
    await new Promise((r) => setTimeout(r, 500));
    ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
  }
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error('the image did not answer GET /readyz with 200 within 60 s');
  }
  if (stage.healthcheck) {
    const h = spawnSync(stage.healthcheck[0], stage.healthcheck.slice(1), { cwd: stage.workdir, env, stdio: 'inherit' });
    if (h.status !== 0) throw new Error(`HEALTHCHECK failed with ${h.status}`);
  }
  child.kill('SIGTERM');
  const { code, signal } = await exited;
  if (code !== 0) throw new Error(`the server stopped with ${code ?? signal} on SIGTERM (expected 0)`);
  const devOnly = ['typescript', 'jest', '@sparticuz/chromium'].filter((p) => fs.existsSync(path.join(stage.workdir, 'node_modules', p)));
  if (devOnly.length) throw new Error(`the final stage holds development packages: ${devOnly.join(', ')}`);
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
  console.log('dockerfile-run: every step ran; the image starts, is ready, passes its health check and stops cleanly');
}

main().catch((e) => {
  console.error(`dockerfile-run: ${e.message}`);
  process.exit(1);
});
