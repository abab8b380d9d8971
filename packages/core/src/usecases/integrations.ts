import type { Clock, IdGenerator, Repositories, UnitOfWork } from '../ports';
import type { Id, PaymentIntegration, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';

/** The provider a new product sells through when none is named. */
export const DEFAULT_PAYMENT_INTEGRATION = 'sandbox';

/** The tenant's integration with this provider, created on first use. */
export async function ensurePaymentIntegration(
  r: Repositories,
  tenant: Tenant,
  name: string,
  ids: IdGenerator,
  now: Date,
): Promise<PaymentIntegration> {
  const existing = await r.paymentIntegrations.findByName(tenant, name);
  if (existing) return existing;
  const id = ids.newId();
  const created: PaymentIntegration = {
    id,
    ...tenant,
    integrationName: name,
    accountName: name === 'sandbox' ? 'Sandbox' : name,
    accountId: `acct_${id.replace(/-/g, '').slice(0, 16)}`,
    accountData: {},
    updatedAt: now,
  };
  await r.paymentIntegrations.save(created);
  return created;
}

/**
 * The published catalog API's payment integrations, as this deployment has them: the sandbox
 * (always: it serves free checkouts, and pays in test) and the configured provider (Stripe when a
 * key is set). They are the deployment's configuration, so the API lists them; it neither creates
 * accounts nor deletes them (docs/decisions.md, "Commerce resources").
 */
export class PaymentIntegrations {
  constructor(private readonly deps: { uow: UnitOfWork; ids: IdGenerator; clock: Clock; payments: { name: string } }) {}

  private names(): string[] {
    return [...new Set([DEFAULT_PAYMENT_INTEGRATION, this.deps.payments.name])].filter((n) => n !== 'none');
  }

  /** The tenant's integrations, one per provider of the deployment (recorded on first sight). */
  async list(tenant: Tenant): Promise<PaymentIntegration[]> {
    return this.deps.uow.run(async (r) => {
      const out: PaymentIntegration[] = [];
      for (const name of this.names()) out.push(await ensurePaymentIntegration(r, tenant, name, this.deps.ids, this.deps.clock.now()));
      return out;
    });
  }

  /** One of the tenant's integrations of a provider this deployment has. */
  async get(tenant: Tenant, id: Id): Promise<PaymentIntegration> {
    const found = await this.deps.uow.read((r) => r.paymentIntegrations.get(id));
    return assertAccessible(found && this.names().includes(found.integrationName) ? found : undefined, tenant, 'payment integration');
  }
}
