import type { IdGenerator, Repositories } from '../ports';
import type { PaymentIntegration, Tenant } from '../model';

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
