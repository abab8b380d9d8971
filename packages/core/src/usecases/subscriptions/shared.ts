import { ErrorCodes, fail } from '../../errors';
import type { Customer, Id, Plan, Subscription, Tenant } from '../../model';
import { assertAccessible } from '../../domain/tenancy';
import type { NewSeats } from '../../domain/seats';
import { subscriptionGroup } from '../../domain/people';
import type { ProviderOutcome, Repositories } from '../../ports';

/** The tenant's subscription (locked for the unit of work with `forUpdate`). */
export async function loadOwned(r: Repositories, tenant: Tenant, id: Id, forUpdate: boolean): Promise<Subscription> {
  const s = forUpdate ? await r.subscriptions.getForUpdate(id) : await r.subscriptions.get(id);
  return assertAccessible(s, tenant, 'subscription');
}

export async function loadPlan(r: Repositories, id: Id): Promise<Plan> {
  return (await r.plans.get(id)) ?? fail(ErrorCodes.PLAN_NOT_FOUND, 'plan not found');
}

export async function loadCustomer(r: Repositories, s: Subscription): Promise<Customer> {
  return (await r.customers.get(s.customerId)) ?? fail(ErrorCodes.NOT_FOUND, 'the subscription has no customer');
}

/** Keeps what the provider asked us to keep, inside the caller's transaction. */
export async function saveOutcome(r: Repositories, outcome: ProviderOutcome | void): Promise<void> {
  for (const d of outcome?.documents ?? []) await r.billingDocuments.save(d);
}

/** Writes new seat licenses batch by batch (one multi-row insert each), inside the caller's transaction. */
export async function saveSeats(r: Repositories, seats: NewSeats | null): Promise<void> {
  if (!seats) return;
  for (const batch of seats.batches()) await r.licenses.saveMany(batch);
}

/** Writes a new subscription with the group its seats go to (docs/decisions.md, "Owners, grantees and groups"). */
export async function saveNewSubscription(r: Repositories, s: Subscription): Promise<void> {
  await r.subscriptions.save(s);
  await r.people.saveGroup(subscriptionGroup(s));
}

/** Dedupes a provider's webhook event inside the transaction that applies it. */
export interface WebhookDelivery {
  provider: string;
  eventId: string;
}
