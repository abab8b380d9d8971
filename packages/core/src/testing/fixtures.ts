import { randomUUID } from 'node:crypto';
import type { Balance, Customer, DomainEvent, License, Organisation, Plan, Product, Subscription, Tenant } from '../model';
import { newPlan, newProduct } from '../domain/builders';
import type { DomainError } from '../errors';

/** Builders of valid records for tests; every id is fresh, so suites can share one database. */
export const T0 = new Date('2026-01-15T12:00:00.000Z');
export const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

export const anOrganisation = (over: Partial<Organisation> = {}): Organisation => ({
  id: randomUUID(),
  name: `org-${randomUUID()}`,
  createdAt: T0,
  ...over,
});

export const aTenant = (org: Organisation, isTest = false): Tenant => ({ organisationId: org.id, isTest });

export function aProduct(tenant: Tenant, over: Partial<Product> = {}): Product {
  const id = over.id ?? randomUUID();
  const p = newProduct(tenant, { id, settingsId: randomUUID() }, { name: over.name ?? `product-${id.slice(0, 6)}` }, over.createdAt ?? T0);
  const featureId = randomUUID();
  return {
    ...p,
    capabilities: [
      { id: randomUUID(), productId: id, name: 'edit', description: 'Edit things', status: 'ACTIVE', createdAt: T0, updatedAt: T0 },
      { id: randomUUID(), productId: id, name: 'export', description: '', status: 'ACTIVE', createdAt: T0, updatedAt: T0 },
    ],
    features: [
      {
        id: featureId,
        productId: id,
        key: 'theme',
        name: 'theme',
        displayName: 'Theme',
        description: 'Colours',
        variableName: 'theme',
        status: 'ACTIVE',
        visibility: 'public',
        valueType: 'enum',
        defaultValue: 'light',
        showUnlimited: false,
        sortOrder: 0,
        updatedAt: T0,
        enumOptions: [
          { id: randomUUID(), featureId, name: 'light', updatedAt: T0 },
          { id: randomUUID(), featureId, name: 'dark', updatedAt: T0 },
        ],
      },
    ],
    ...over,
  };
}

export function aPlan(product: Product, over: Partial<Plan> = {}): Plan {
  const p = newPlan(
    { organisationId: product.organisationId, isTest: product.isTest },
    over.id ?? randomUUID(),
    { name: over.name ?? 'Team', productId: product.id },
    over.createdAt ?? T0,
  );
  return { ...p, capabilityIds: product.capabilities.slice(0, 1).map((c) => c.id), ...over };
}

export function aCustomer(tenant: Tenant, over: Partial<Customer> = {}): Customer {
  return {
    id: randomUUID(),
    ...tenant,
    value: `member-${randomUUID().slice(0, 8)}@example.com`,
    emailAddress: null,
    paymentCustomerId: null,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

export function aSubscription(plan: Plan, customer: Customer, over: Partial<Subscription> = {}): Subscription {
  return {
    id: randomUUID(),
    organisationId: plan.organisationId,
    isTest: plan.isTest,
    productId: plan.productId,
    planId: plan.id,
    customerId: customer.id,
    granteeId: 'grantee-1',
    email: customer.emailAddress,
    paymentProvider: 'fake',
    paymentSubscriptionId: null,
    type: plan.licenseType,
    quantity: 1,
    status: 'ACTIVE',
    currency: 'USD',
    currentPeriodStart: T0,
    currentPeriodEnd: at(30 * 86_400_000),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    replacesId: null,
    lineItemIds: [],
    addedPlans: [],
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

export function aLicense(plan: Plan, over: Partial<License> = {}): License {
  return {
    id: randomUUID(),
    organisationId: plan.organisationId,
    isTest: plan.isTest,
    productId: plan.productId,
    planId: plan.id,
    subscriptionId: null,
    granteeId: null,
    purchaser: 'member@example.com',
    email: null,
    name: null,
    paymentService: 'none',
    type: plan.licenseType,
    status: 'ACTIVE',
    cancelAtPeriodEnd: false,
    startTime: T0,
    endTime: at(30 * 86_400_000),
    metadata: {},
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

export function anEvent(tenant: Tenant, subscriptionId: string, over: Partial<DomainEvent> = {}): DomainEvent {
  return {
    id: randomUUID(),
    ...tenant,
    type: 'seats.increment',
    subscriptionId,
    payload: { type: 'seats.increment', subscriptionId, count: 1, proration: 'none' },
    status: 'queued',
    attempts: 0,
    runAt: T0,
    lastError: null,
    errorCode: null,
    lockedUntil: null,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

/** The domain error code `fn` throws, or undefined when it does not throw one. */
/** A usage balance not yet used (no grant, nothing used, reserved or waiting to be reported), open. */
export const aBalance = (over: Partial<Balance> = {}): Balance => ({
  id: randomUUID(),
  organisationId: randomUUID(),
  isTest: false,
  owner: 'acme',
  meterId: randomUUID(),
  periodStart: T0,
  periodEnd: null,
  granted: 0n,
  used: 0n,
  reserved: 0n,
  cap: null,
  limited: false,
  closedAt: null,
  unreported: 0n,
  unreportedOps: 0,
  reportedAt: null,
  reportDueAt: null,
  createdAt: T0,
  updatedAt: T0,
  ...over,
});

/** The error a promise rejects with (a test that expects a rejection fails when it resolves). */
export async function rejectionOf(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a rejection');
}

export function errorCodeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}
