import 'reflect-metadata';
import { Container } from 'inversify';
import {
  ApiKeyService, CatalogAdmin, CatalogFileExport, CatalogFileImport, CatalogQueries, CheckoutService, EventWorker, IdempotencyService, LicenseService, SubscriptionService,
  type Clock, type CoreDeps, type PaymentProvider,
} from '@tollgate/core';
import { migrateToLatest, openDatabase, PostgresUnitOfWork, type DatabaseHandle } from '@tollgate/adapter-postgres';
import { EcdsaSigner, HmacSigner } from '@tollgate/adapter-hmac';
import { FreeCheckout, SandboxPaymentProvider } from '@tollgate/adapter-sandbox';
import { StripePaymentProvider } from '@tollgate/adapter-stripe';
import Stripe from 'stripe';
import { consoleLogger, SignedLinks, type Logger } from '@tollgate/http';
import type { Config } from './config';
import { SystemClock, UuidGenerator, WakeSignal } from './services';
import { TOKENS } from './tokens';

export interface ContainerOptions {
  /** An open database (tests); otherwise one is opened from the configuration and migrated. */
  database?: DatabaseHandle;
  clock?: Clock;
  payments?: PaymentProvider;
  logger?: Logger;
  /** Leave migrations to the caller (`tollgate migrate` reports what it applied). */
  skipMigrations?: boolean;
}

/**
 * The composition root shared by every app: binds each port to its adapter and each use case to
 * its ports. Apps resolve what they need by token.
 */
export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const database = options.database ?? openDatabase({ url: config.databaseUrl, dataDir: config.databaseUrl ? undefined : `${config.dataDir}/pglite` });
  if (!options.database && !options.skipMigrations) await migrateToLatest(database.db);
  const c = new Container();
  const uow = new PostgresUnitOfWork(database.db);
  const clock = options.clock ?? new SystemClock();
  const signerDeps = { uow, clock, masterSecret: config.masterSecret };
  // The sandbox serves free checkouts always, and is the payment provider unless another is configured.
  const stripe = config.stripeSecretKey ? new Stripe(config.stripeSecretKey, { maxNetworkRetries: 2, timeout: 20_000 }) : undefined;
  const sandbox = new SandboxPaymentProvider({ publicUrl: config.publicUrl, linkSecret: `sandbox-links:${config.masterSecret}`, clock });
  const deps: CoreDeps = {
    uow,
    clock,
    ids: new UuidGenerator(),
    payments: options.payments ?? (stripe ? new StripePaymentProvider(stripe, { publicUrl: config.publicUrl }) : sandbox),
    freeCheckout: new FreeCheckout(sandbox.links),
    signer: config.signer === 'hmac' ? new HmacSigner(signerDeps) : new EcdsaSigner(signerDeps),
    events: new WakeSignal(),
  };
  c.bind(TOKENS.Config).toConstantValue(config);
  c.bind(TOKENS.Database).toConstantValue(database);
  c.bind(TOKENS.UnitOfWork).toConstantValue(deps.uow);
  c.bind(TOKENS.Clock).toConstantValue(deps.clock);
  c.bind(TOKENS.Ids).toConstantValue(deps.ids);
  c.bind(TOKENS.Signer).toConstantValue(deps.signer);
  c.bind(TOKENS.Payments).toConstantValue(deps.payments);
  c.bind(TOKENS.Sandbox).toConstantValue(sandbox);
  if (stripe) c.bind(TOKENS.Stripe).toConstantValue(stripe);
  c.bind(TOKENS.EventQueue).toConstantValue(deps.events);
  c.bind(TOKENS.Logger).toConstantValue(options.logger ?? consoleLogger);
  const subscriptions = new SubscriptionService(deps);
  c.bind(TOKENS.ApiKeys).toConstantValue(new ApiKeyService(deps));
  c.bind(TOKENS.CatalogQueries).toConstantValue(new CatalogQueries(deps));
  c.bind(TOKENS.CatalogAdmin).toConstantValue(new CatalogAdmin(deps));
  c.bind(TOKENS.CatalogImport).toConstantValue(new CatalogFileImport(deps));
  c.bind(TOKENS.CatalogExport).toConstantValue(new CatalogFileExport(deps));
  c.bind(TOKENS.Checkout).toConstantValue(new CheckoutService(deps));
  c.bind(TOKENS.Subscriptions).toConstantValue(subscriptions);
  c.bind(TOKENS.Licenses).toConstantValue(new LicenseService(deps));
  c.bind(TOKENS.EventWorker).toConstantValue(new EventWorker(deps, subscriptions));
  c.bind(TOKENS.Idempotency).toConstantValue(new IdempotencyService(deps));
  c.bind(TOKENS.SignedLinks).toConstantValue(new SignedLinks(`checkout-links:${config.masterSecret}`));
  return c;
}

/** Closes what the container opened. */
export async function closeContainer(c: Container): Promise<void> {
  await c.get<DatabaseHandle>(TOKENS.Database).close();
}
