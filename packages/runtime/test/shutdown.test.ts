import { spawn } from 'node:child_process';
import { get } from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { WebhookResponse } from '@tollgate/core';
import { createTestCore, ScriptedWebhookSender, seedSample } from '@tollgate/core/testing';
import { BackgroundWork, DEFAULT_SHUTDOWN_TIMEOUT_MS, loadConfig, WakeSignal } from '../src';
import { builtEntry, processEnv, REPO_ROOT } from '../src/testing';

// A shutdown that ends: the background work claims nothing after the stop signal, and a shutdown
// that cannot finish (a database that does not answer) ends at SHUTDOWN_TIMEOUT_MS, exit 1, one line.

jest.setTimeout(60_000);

const quiet = { info: () => undefined, error: () => undefined };
const settle = async (until: () => boolean) => {
  for (let i = 0; i < 10_000 && !until(); i++) await new Promise((r) => setImmediate(r));
};

describe('BackgroundWork.stop', () => {
  it('claims no webhook delivery after the stop: the POSTs in flight finish, the rest wait for the next start', async () => {
    const held: (() => void)[] = [];
    let stopping = false;
    const sender = new ScriptedWebhookSender(
      () =>
        stopping
          ? { status: 200, body: 'ok' }
          : new Promise<WebhookResponse>((resolve) => held.push(() => resolve({ status: 200, body: 'ok' }))),
      { timeoutMs: Infinity },
    );
    const core = createTestCore({ webhooks: sender, limits: { webhookConcurrency: 2 } });
    const { tenant } = await seedSample(core, 'shutdown');
    for (let i = 0; i < 12; i++)
      await core.webhooks.create(tenant, { url: `https://receiver.example.com/${i}`, events: ['product.updated'] });
    const [product] = await core.queries.listProducts(tenant);
    await core.products.updateProduct(tenant, product.id, { name: 'Edited' });

    const background = new BackgroundWork(core.worker, core.sweeps, new WakeSignal(), quiet, 60_000, {
      delivery: core.webhookDelivery,
      events: core.webhookEvents,
    });
    background.start();
    await settle(() => held.length === 2);
    stopping = true;
    const stopped = background.stop();
    held.splice(0).forEach((answer) => answer());
    await stopped;
    expect(sender.sent).toHaveLength(2);
    // Nothing lost: the next start delivers the other ten, once each.
    expect(await core.webhookDelivery.drain()).toBe(10);
    expect(new Set(sender.sent.map((r) => r.url)).size).toBe(12);
  });

  it('skips the steps of a pass not yet begun (they claim work)', async () => {
    const calls: string[] = [];
    let stopped: Promise<void> | undefined;
    const sweep = (name: string) => async () => void calls.push(name);
    const worker = {
      drain: async () => {
        calls.push('events');
        stopped = background.stop();
        return 0;
      },
    };
    const sweeps = {
      cancellations: sweep('cancellations'),
      renewals: sweep('renewals'),
      endedEvaluations: sweep('endedEvaluations'),
      usageHolds: sweep('usageHolds'),
      usageLedger: sweep('usageLedger'),
    };
    const background = new BackgroundWork(worker as never, sweeps as never, new WakeSignal(), quiet, 60_000);
    await background.tick();
    await stopped;
    expect(calls).toEqual(['events']);
  });
});

describe('SHUTDOWN_TIMEOUT_MS', () => {
  it('is 8000 by default (under the 10 s Docker waits), a whole number of milliseconds when set', () => {
    const env = { DATA_DIR: '/tmp/tollgate-shutdown-config', TOLLGATE_SECRET: 'x'.repeat(32) };
    expect(loadConfig(env).shutdownTimeoutMs).toBe(8000);
    expect(loadConfig({ ...env, SHUTDOWN_TIMEOUT_MS: '2500' }).shutdownTimeoutMs).toBe(2500);
    expect(() => loadConfig({ ...env, SHUTDOWN_TIMEOUT_MS: '2s' })).toThrow(/SHUTDOWN_TIMEOUT_MS must be a whole number/);
  });

  it("is below compose's stop_grace_period, so a compose stop never kills an instance before it ends by itself", () => {
    const compose = fs.readFileSync(path.join(REPO_ROOT, 'compose.yaml'), 'utf8');
    const grace = /^\s+stop_grace_period: (\d+)s$/m.exec(compose)?.[1];
    expect(Number(grace) * 1000).toBeGreaterThan(DEFAULT_SHUTDOWN_TIMEOUT_MS);
    expect(DEFAULT_SHUTDOWN_TIMEOUT_MS).toBeLessThan(10_000); // Docker's own wait
  });

  /**
   * `serve` over a runtime whose database never answers again: its pools never close, and the
   * background work is in a pass that never ends.
   */
  const hungServe = (timeoutMs: number | undefined) => `
    const { createServer } = require('node:http');
    const { serve, createLogger } = require(${JSON.stringify(builtEntry('packages/runtime/dist/index.js'))});
    const never = () => new Promise(() => undefined);
    const logger = createLogger('info');
    const runtime = {
      config: { port: 0, runWorker: true, workerIntervalMs: 60000, shutdownTimeoutMs: ${timeoutMs ?? 'undefined'} },
      logger,
      wake: { onWake() {} },
      core: {
        worker: { drain: never },
        sweeps: {},
        webhookDelivery: { drain: never },
        webhookEvents: { purge: never },
      },
      close: never,
    };
    serve(runtime, createServer(), () => console.error('listening'));
    // A line logged before the signal, still buffered: the exit must write it.
    logger.info('before the signal');
  `;

  const runHung = (timeoutMs: number | undefined) =>
    new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve, reject) => {
      const child = spawn(process.execPath, ['-e', hungServe(timeoutMs)], { env: processEnv({}), cwd: REPO_ROOT });
      let stdout = '';
      let stderr = '';
      let signalled = 0;
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => {
        stderr += d;
        if (!signalled && stderr.includes('listening')) {
          signalled = Date.now();
          child.kill('SIGTERM');
        }
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('error', reject);
      child.on('exit', (code) => {
        clearTimeout(killer);
        resolve({ code, stdout, stderr, ms: Date.now() - signalled });
      });
    });

  it('ends a shutdown that cannot finish: exit 1 at the deadline, one line saying so, the log flushed', async () => {
    const r = await runHung(700);
    expect(r.code).toBe(1);
    expect(r.ms).toBeGreaterThanOrEqual(650);
    expect(r.ms).toBeLessThan(15_000); // a bound on waiting (a busy machine), far below "never"
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.map((l) => l.msg)).toEqual([
      'before the signal',
      'shutting down',
      'shutdown did not finish within 700 ms (SHUTDOWN_TIMEOUT_MS): exiting with work unfinished',
    ]);
    expect(lines[2].level).toBe('error');
  });

  /**
   * `serve` over a runtime without background work whose close takes `closeMs`, with `handler`
   * answering requests and, when `stuckFlush`, a log that never says it is flushed.
   */
  const slowServe = (o: { timeoutMs: number; closeMs: number; handler: string; stuckFlush?: boolean }) => `
    const { createServer } = require('node:http');
    const { serve, createLogger } = require(${JSON.stringify(builtEntry('packages/runtime/dist/index.js'))});
    const logger = createLogger('info');
    ${o.stuckFlush ? 'logger.flush = () => new Promise(() => undefined);' : ''}
    const runtime = {
      config: { port: 0, runWorker: false, shutdownTimeoutMs: ${o.timeoutMs} },
      logger,
      wake: { onWake() {} },
      core: {},
      close: () => new Promise((r) => setTimeout(r, ${o.closeMs})),
    };
    serve(runtime, createServer(${o.handler}), (port) => console.error('listening on ' + port));
  `;
  const spawnServe = (script: string) => {
    const child = spawn(process.execPath, ['-e', script], { env: processEnv({}), cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code) => {
        clearTimeout(killer);
        resolve({ code, stdout, stderr });
      });
    });
    /** Resolves with the first match of `re` in what the child wrote to stderr. */
    const said = (re: RegExp) =>
      new Promise<RegExpExecArray>((resolve) => {
        const look = () => {
          const m = re.exec(stderr);
          if (m) resolve(m);
          else child.stderr.once('data', () => setImmediate(look));
        };
        look();
      });
    const port = said(/listening on (\d+)/).then((m) => Number(m[1]));
    return { child, exited, port, said };
  };

  it("exits 1 when the close finishes only while the deadline's line is being flushed", async () => {
    // The deadline fires at 500 ms, its flush waits up to 500 ms more; the close ends at about 800 ms.
    const { child, exited, port } = spawnServe(slowServe({ timeoutMs: 500, closeMs: 800, handler: '', stuckFlush: true }));
    await port;
    child.kill('SIGTERM');
    const r = await exited;
    expect(r.code).toBe(1);
  });

  it('answers a request in flight that finishes within the grace period, then exits 0', async () => {
    const { child, exited, port, said } = spawnServe(
      slowServe({
        timeoutMs: 3_000,
        closeMs: 0,
        handler: "(req, res) => { console.error('received'); setTimeout(() => res.end('done'), 400); }",
      }),
    );
    const answer = new Promise<{ status?: number; body: string }>((resolve, reject) => {
      void port.then((p) =>
        get({ host: '127.0.0.1', port: p, path: '/slow' }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        }).on('error', reject),
      );
    });
    // The request is being handled (its answer 400 ms away) when the signal comes.
    await said(/received/);
    child.kill('SIGTERM');
    expect(await answer).toEqual({ status: 200, body: 'done' });
    const r = await exited;
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('did not finish');
  });

  it('has a default deadline: a hung shutdown without the variable still ends, at 8 s', async () => {
    const r = await runHung(undefined);
    expect(r.code).toBe(1);
    expect(r.ms).toBeGreaterThanOrEqual(7900);
    expect(r.stdout).toContain('shutdown did not finish within 8000 ms');
  }, 60_000);
});
