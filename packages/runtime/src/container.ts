import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { RequestHandler } from 'express';
import { Container } from 'inversify';
import Stripe from 'stripe';
import {
  createCore,
  type Clock,
  type Core,
  type CoreDeps,
  type ChangeFeed,
  type EventQueue,
  type IdGenerator,
  type KeyCipher,
  type Logger,
  type PaymentProvider,
  type Randomness,
  type SignatureScheme,
  type SignedLinks,
  type UnitOfWork,
  type WebhookSender,
} from '@tollgate/core';
import {
  migrateToLatest,
  pendingMigrations,
  pingDatabase,
  openDatabase,
  PostgresUnitOfWork,
  type DatabaseHandle,
} from '@tollgate/adapter-postgres';
import { CryptoRandomness, EcdsaP256Scheme, HmacSha256Scheme, HmacSignedLinks, SecretBox } from '@tollgate/adapter-hmac';
import { createSandboxRouter, FreeCheckout, SandboxPaymentProvider } from '@tollgate/adapter-sandbox';
import { createStripeWebhookRouter, StripePaymentProvider, stripeKeyMode } from '@tollgate/adapter-stripe';
import { HttpWebhookSender, StandardWebhookSigner } from '@tollgate/adapter-webhooks';
import type { Config } from './config';
import { lockDataDir } from './data-lock';
import { ModePaymentRouter } from './payments';
import { SystemClock, UuidGenerator, WakeSignal } from './services';
import { assertReplicaAnswers, assertSecretOpensDatabase } from './startup-checks';
import { createLogger, droppedLogLines, type ProcessLogger } from './logger';

/** How long readiness waits for each database's `select 1` (under /readyz's 2 s, so the answer names it). */
const READINESS_PING_MS = 1500;

/** Bytes one row of the check's index takes (measured: docs/decisions.md, issue #22). */
const INDEX_ROW_BYTES = 230;

/**
 * Rows of the check's index that fit in half of V8's heap limit (`--max-old-space-size`, which
 * `npm start` and the image set): past it the index is given up for the LRU, as past
 * `CHECK_INDEX_MAX_LICENSES`, rather than the process running out of heap while filling it.
 */
export function indexRowsThatFit(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.floor(heapLimitBytes / 2 / INDEX_ROW_BYTES);
}

/** Inversify tokens: one Symbol per port; bound and resolved in this file only. */
const T = {
  Config: Symbol('Config'),
  Database: Symbol('Database'),
  UnitOfWork: Symbol('UnitOfWork'),
  ReadUnitOfWork: Symbol('ReadUnitOfWork'),
  ChangeFeed: Symbol('ChangeFeed'),
  Clock: Symbol('Clock'),
  Ids: Symbol('Ids'),
  Random: Symbol('Randomness'),
  Links: Symbol('SignedLinks'),
  SandboxLinks: Symbol('SandboxSignedLinks'),
  Scheme: Symbol('SignatureScheme'),
  Cipher: Symbol('KeyCipher'),
  Sandbox: Symbol('Sandbox'),
  Payments: Symbol('Payments'),
  Stripe: Symbol('Stripe'),
  StripeTest: Symbol('StripeTest'),
  Wake: Symbol('Wake'),
  WebhookSender: Symbol('WebhookSender'),
  Logger: Symbol('Logger'),
  Core: Symbol('Core'),
} as const;

export interface RuntimeOptions {
  /** An open database (tests); otherwise one is opened from the configuration and migrated. */
  database?: DatabaseHandle;
  clock?: Clock;
  payments?: PaymentProvider;
  logger?: Logger;
  /** Where webhooks are POSTed (tests); otherwise node:http with the configuration's rules. */
  webhookSender?: WebhookSender;
  /** Leave migrations to the caller (`tollgate migrate` reports what it applied). */
  skipMigrations?: boolean;
  /** How this process is named to another that finds the embedded database locked (e.g. `tollgate server`). */
  lockAs?: string;
  /** Start even if `DATABASE_READ_URL` does not answer (the CLI, which reads nothing there). */
  skipReplicaCheck?: boolean;
}

/**
 * Everything a process runs on, resolved once by the composition root: the use cases (`core`) and
 * the few edge pieces adapters contribute (the sandbox's hosted pages, providers' webhooks). Apps,
 * the CLI and tests take this plain typed record; none of them sees the container.
 */
export interface Runtime {
  config: Config;
  core: Core;
  logger: Logger;
  clock: Clock;
  /** The one link signer (deferred checkout links). */
  links: SignedLinks;
  /** Wakes this process's event worker when events are queued. */
  wake: WakeSignal;
  /** Routers adapters serve: the sandbox's hosted pages, and provider webhooks by provider. */
  pages: { sandbox: RequestHandler; webhooks: Record<string, RequestHandler> };
  database: DatabaseHandle;
  /**
   * The embedded database's files (`DATA_DIR/pglite`) were not there before this runtime opened
   * them: looked at under the data directory's lock, so no other process made them meanwhile. False
   * on a PostgreSQL server and on a database given in the options.
   */
  createdEmbeddedDatabase: boolean;
  /** Applies pending database migrations; the names applied now. */
  migrate(): Promise<string[]>;
  /** Log lines the process's stdout logger dropped because its reader fell behind. */
  logLinesDropped(): number;
  /** Whether this instance can serve: the database answers, its migrations are current, the change feed is heard. */
  readiness(): Promise<Readiness>;
  /** Closes what the runtime opened. */
  close(): Promise<void>;
}

/** One check of readiness: ok, or why not. */
export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

export interface Readiness {
  ready: boolean;
  checks: { database: ReadinessCheck; migrations: ReadinessCheck; listener: ReadinessCheck; replica?: ReadinessCheck };
}

/** Binds each port to its adapter and resolves the runtime. */
export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  // One process at a time on the embedded database (a server and a CLI beside it would each write
  // their own view of the files); a PostgreSQL server is shared by design.
  const embedded = !options.database && !config.databaseUrl;
  const unlock = embedded ? lockDataDir(config.dataDir, options.lockAs) : () => undefined;
  const createdEmbeddedDatabase = embedded && !fs.existsSync(path.join(config.dataDir, 'pglite'));
  let database: DatabaseHandle;
  try {
    database =
      options.database ?? openDatabase({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : `${config.dataDir}/pglite` });
    if (!options.database && !options.skipMigrations) await migrateToLatest(database.db);
  } catch (e) {
    unlock();
    throw e;
  }

  const c = new Container();
  c.bind(T.Config).toConstantValue(config);
  c.bind(T.Database).toConstantValue(database);
  c.bind(T.UnitOfWork)
    .toDynamicValue(() => new PostgresUnitOfWork(database.db))
    .inSingletonScope();
  // The check's snapshot loads may go to a read replica; invalidations still come from the primary.
  const replica = config.databaseReadUrl ? openDatabase({ url: config.databaseReadUrl }) : undefined;
  c.bind(T.ReadUnitOfWork).toConstantValue(replica ? new PostgresUnitOfWork(replica.db) : undefined);
  c.bind(T.ChangeFeed)
    .toDynamicValue((ctx) =>
      database.changeFeed({
        onError: (e) => ctx.get<Logger>(T.Logger).error('change feed lost', { error: String(e) }),
        boundMs: config.changeFeedBoundMs,
        heartbeatMs: Math.max(20, Math.floor(config.changeFeedBoundMs / 5)),
      }),
    )
    .inSingletonScope();
  c.bind(T.Clock).toConstantValue(options.clock ?? new SystemClock());
  c.bind(T.Ids).toConstantValue(new UuidGenerator());
  c.bind(T.Random).toConstantValue(new CryptoRandomness());
  // One secret per use, derived from the master secret, so a link of one kind is never taken for another.
  c.bind(T.Links).toConstantValue(new HmacSignedLinks(`checkout-links:${config.masterSecret}`));
  c.bind(T.SandboxLinks).toConstantValue(new HmacSignedLinks(`sandbox-links:${config.masterSecret}`));
  c.bind(T.Scheme).toConstantValue(config.signer === 'hmac' ? new HmacSha256Scheme() : new EcdsaP256Scheme());
  const cipher = new SecretBox(config.masterSecret);
  try {
    await assertSecretOpensDatabase(database, cipher);
    if (!options.skipReplicaCheck) await assertReplicaAnswers(replica);
  } catch (e) {
    await replica?.close().catch(() => undefined);
    if (!options.database) await database.close().catch(() => undefined);
    unlock();
    throw e;
  }
  c.bind(T.Cipher).toConstantValue(cipher);
  c.bind(T.Wake).toConstantValue(new WakeSignal());
  c.bind(T.WebhookSender).toConstantValue(options.webhookSender ?? new HttpWebhookSender({ allowPrivate: config.webhookAllowPrivate }));
  c.bind(T.Logger).toConstantValue(options.logger ?? createLogger(config.logLevel));
  // The sandbox serves free checkouts always, and is the payment provider unless Stripe is configured.
  c.bind(T.Sandbox)
    .toDynamicValue(
      (ctx) =>
        new SandboxPaymentProvider({
          publicUrl: config.publicUrl,
          links: ctx.get<SignedLinks>(T.SandboxLinks),
          clock: ctx.get<Clock>(T.Clock),
        }),
    )
    .inSingletonScope();
  // Stripe by mode (docs/payments.md): a live key bills live mode only; test mode goes to its own
  // test keys where set, else to the sandbox; a test key alone bills both modes (staging).
  const stripeClient = (key: string) => new Stripe(key, { maxNetworkRetries: 2, timeout: 20_000 });
  // A key not known to be a test key is taken for a live one (test mode then goes to the sandbox).
  const liveKey = config.stripeSecretKey ? stripeKeyMode(config.stripeSecretKey) !== 'test' : false;
  if (config.stripeSecretKey) c.bind(T.Stripe).toConstantValue(stripeClient(config.stripeSecretKey));
  if (config.stripeSecretKey && liveKey && config.stripeTestSecretKey)
    c.bind(T.StripeTest).toConstantValue(stripeClient(config.stripeTestSecretKey));
  c.bind(T.Payments)
    .toDynamicValue((ctx) => {
      if (options.payments) return options.payments;
      const sandbox = ctx.get<SandboxPaymentProvider>(T.Sandbox);
      if (!c.isBound(T.Stripe)) return sandbox;
      const stripe = new StripePaymentProvider(ctx.get<Stripe>(T.Stripe), { publicUrl: config.publicUrl });
      if (!liveKey) return stripe;
      const test = c.isBound(T.StripeTest)
        ? new StripePaymentProvider(ctx.get<Stripe>(T.StripeTest), { publicUrl: config.publicUrl })
        : undefined;
      // Each call to the provider of what it is about: a sandbox-billed test-mode subscription stays there.
      return new ModePaymentRouter({ live: stripe, test, others: [sandbox] });
    })
    .inSingletonScope();
  // Under a live key (the router): test mode's paid checkouts without test keys go to the sandbox,
  // never the live account; and with or without test keys, the sandbox is the router's other
  // provider, which core finds by the name its subscriptions record (their renewals of test mode,
  // usage bills, plan rules).
  const routed = !options.payments && c.isBound(T.Stripe) && liveKey;
  const testPayments = (ctx: { get<X>(id: symbol): X }): PaymentProvider | undefined =>
    routed && !c.isBound(T.StripeTest) ? ctx.get<SandboxPaymentProvider>(T.Sandbox) : undefined;
  const otherPayments = (ctx: { get<X>(id: symbol): X }): PaymentProvider[] | undefined =>
    routed ? [ctx.get<SandboxPaymentProvider>(T.Sandbox)] : undefined;
  c.bind(T.Core)
    .toDynamicValue((ctx) => {
      const deps: CoreDeps = {
        uow: ctx.get<UnitOfWork>(T.UnitOfWork),
        readUow: ctx.get<UnitOfWork | undefined>(T.ReadUnitOfWork),
        changes: ctx.get<ChangeFeed>(T.ChangeFeed),
        clock: ctx.get<Clock>(T.Clock),
        ids: ctx.get<IdGenerator>(T.Ids),
        random: ctx.get<Randomness>(T.Random),
        payments: ctx.get<PaymentProvider>(T.Payments),
        testPayments: testPayments(ctx),
        otherPayments: otherPayments(ctx),
        freeCheckout: new FreeCheckout(ctx.get<SandboxPaymentProvider>(T.Sandbox).links),
        scheme: ctx.get<SignatureScheme>(T.Scheme),
        cipher: ctx.get<KeyCipher>(T.Cipher),
        events: ctx.get<EventQueue>(T.Wake),
        webhooks: ctx.get<WebhookSender>(T.WebhookSender),
        webhookSigner: new StandardWebhookSigner(),
        logger: ctx.get<Logger>(T.Logger),
        limits: {
          maxSeats: config.maxSeats,
          eventLeaseMs: config.eventLeaseSeconds * 1000,
          checkCacheEntries: config.checkCacheEntries,
          checkIndexMaxLicenses: Math.min(config.checkIndexMaxLicenses, indexRowsThatFit()),
          keyRevalidateMs: Math.max(50, Math.floor(config.changeFeedBoundMs / 2)),
          checkOutageGraceMs: config.checkOutageGraceSeconds * 1000,
          changeFeedBoundMs: config.changeFeedBoundMs,
          webhookEventRetentionMs: config.webhookEventRetentionDays * 86_400_000,
          usageLedgerRetentionMonths: config.usageLedgerRetentionMonths,
          usageGroupCommit: config.usageGroupCommit,
          usageMeterWindowMs: config.usageMeterWindowSeconds * 1000,
          usageEventWindowMs: config.usageEventWindowSeconds * 1000,
          webhookConcurrency: config.webhookConcurrency,
        },
      };
      return createCore(deps);
    })
    .inSingletonScope();

  const core = c.get<Core>(T.Core);
  await core.listen();
  const logger = c.get<Logger>(T.Logger);
  const stripe = c.isBound(T.Stripe) ? c.get<Stripe>(T.Stripe) : undefined;
  const stripeTest = c.isBound(T.StripeTest) ? c.get<Stripe>(T.StripeTest) : undefined;
  return {
    config,
    core,
    logger,
    clock: c.get<Clock>(T.Clock),
    links: c.get<SignedLinks>(T.Links),
    wake: c.get<WakeSignal>(T.Wake),
    pages: {
      sandbox: createSandboxRouter({
        checkout: core.checkout,
        subscriptions: core.subscriptions,
        seats: core.seats,
        provider: c.get<SandboxPaymentProvider>(T.Sandbox),
        logger,
      }),
      webhooks:
        stripe && config.stripeWebhookSecret
          ? {
              stripe: createStripeWebhookRouter({
                stripe,
                webhookSecret: config.stripeWebhookSecret,
                livemode: liveKey,
                ...(stripeTest && config.stripeTestWebhookSecret
                  ? { testAccount: { stripe: stripeTest, webhookSecret: config.stripeTestWebhookSecret } }
                  : {}),
                checkout: core.checkout,
                providerSync: core.providerSync,
                logger,
              }),
            }
          : {},
    },
    database,
    createdEmbeddedDatabase,
    migrate: () => migrateToLatest(database.db),
    logLinesDropped: droppedLogLines,
    readiness: async () => {
      // The read replica answers the check's loads (those the in-memory index misses: 503 while it is
      // gone). Shown, but not a reason to be unready: every instance shares it, and a load balancer
      // dropping them all would take webhooks, checkouts and the checks from memory down with it.
      // Pinged beside the primary's checks, not after them: a hung replica never spends their time.
      const replicaPing: Promise<ReadinessCheck | undefined> = replica
        ? pingDatabase(replica.db, { timeoutMs: READINESS_PING_MS }).then(
            () => ({ ok: true }),
            (e: unknown) => ({
              ok: false,
              detail: `the read replica (DATABASE_READ_URL) does not answer: ${e instanceof Error ? e.message : String(e)}`,
            }),
          )
        : Promise.resolve(undefined);
      const primary = async (): Promise<{ database: ReadinessCheck; migrations: ReadinessCheck }> => {
        // Capped below /readyz's own 2 s: a hung database is named here, and its connection closed.
        const database_: ReadinessCheck = await pingDatabase(database.db, { timeoutMs: READINESS_PING_MS }).then(
          () => ({ ok: true }),
          (e: unknown) => ({ ok: false, detail: `the database does not answer: ${e instanceof Error ? e.message : String(e)}` }),
        );
        if (!database_.ok) return { database: database_, migrations: { ok: false, detail: 'not checked: the database does not answer' } };
        const pending = await pendingMigrations(database.db).catch(() => null);
        return {
          database: database_,
          migrations:
            pending === null
              ? { ok: false, detail: 'the migrations could not be read' }
              : pending.length
                ? { ok: false, detail: `pending migrations: ${pending.join(', ')}` }
                : { ok: true },
        };
      };
      const [{ database: database_, migrations }, replica_] = await Promise.all([primary(), replicaPing]);
      const listener: ReadinessCheck = core.checkCache.stats().live
        ? { ok: true }
        : {
            ok: false,
            detail: `the change feed is not heard or not confirmed within ${config.changeFeedBoundMs} ms (caches distrusted: checks read the database until it is)`,
          };
      return {
        ready: database_.ok && migrations.ok && listener.ok,
        checks: { database: database_, migrations, listener, ...(replica_ ? { replica: replica_ } : {}) },
      };
    },
    close: async () => {
      await core.stopListening();
      await replica?.close();
      await database.close();
      unlock();
      // The request log is buffered: what is held is written before the process exits.
      await (logger as Partial<ProcessLogger>).flush?.();
    },
  };
}
