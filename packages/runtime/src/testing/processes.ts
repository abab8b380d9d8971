import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** The repository root (tests run the built entries under it). */
export const REPO_ROOT = path.join(__dirname, '..', '..', '..', '..');

/** A built entry point (`apps/server/dist/main.js`); tests that run processes need `npm run build`. */
export function builtEntry(relative: string): string {
  const file = path.join(REPO_ROOT, relative);
  if (!fs.existsSync(file)) throw new Error(`${relative} is not built: run npm run build first`);
  return file;
}

/** A TCP port nobody listens on right now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** The environment a test process runs with: none of the test runner's own settings, plus `env`. */
export function processEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'error', RATE_LIMIT: 'off' };
  return { ...base, ...env };
}

/** A process that runs to its end: exit code, stdout and stderr. */
export function runToEnd(entry: string, args: string[], env: Record<string, string | undefined>, cwd = REPO_ROOT) {
  const r = spawnSync(process.execPath, [entry, ...args], { env: processEnv(env), cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface Running {
  process: ChildProcess;
  url: string;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then waits for the exit (code). */
  stop(): Promise<number | null>;
}

/** Starts a long-running entry (a server) on `port` and waits until it answers `/healthz`. */
export async function startProcess(
  entry: string,
  env: Record<string, string | undefined>,
  port: number,
  timeoutMs = 60_000,
): Promise<Running> {
  const child = spawn(process.execPath, [entry], { env: processEnv({ PORT: String(port), ...env }), cwd: REPO_ROOT });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}: ${err || out}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not answer /healthz in ${timeoutMs} ms: ${err || out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    process: child,
    url,
    stdout: () => out,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
