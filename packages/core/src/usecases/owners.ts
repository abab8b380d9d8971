import { ErrorCodes, fail } from '../errors';
import type { Customer, Id, Page, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import type { CustomerListQuery } from '../ports';
import type { CoreDeps } from './deps';

/**
 * Owners of the catalog API: the customers who pay (a subscription's purchaser, the checkout's
 * `member`), listed, read, renamed and removed (docs/decisions.md, "Owners, grantees and groups").
 */
export class OwnerDirectory {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock'>) {}

  async list(tenant: Tenant, query: CustomerListQuery): Promise<Page<Customer>> {
    return this.deps.uow.read((r) => r.customers.page(tenant, query));
  }

  async get(tenant: Tenant, id: Id): Promise<Customer> {
    return this.deps.uow.read(async (r) => assertAccessible(await r.customers.get(id), tenant, 'owner'));
  }

  /** The owner's value (unique in the tenant) and e-mail address (`""` clears it). */
  async update(tenant: Tenant, id: Id, change: { owner: string; email?: string }): Promise<Customer> {
    return this.deps.uow.run(async (r) => {
      const current = assertAccessible(await r.customers.get(id), tenant, 'owner');
      const clash = await r.customers.findByValue(tenant, change.owner);
      if (clash && clash.id !== id)
        fail(ErrorCodes.VALIDATION_FAILED, 'another owner has this value', [{ property: 'owner', error: 'is the value of another owner' }]);
      const updated: Customer = {
        ...current,
        value: change.owner,
        emailAddress: change.email === undefined ? current.emailAddress : change.email === '' ? null : change.email,
        updatedAt: this.deps.clock.now(),
      };
      await r.customers.save(updated);
      return updated;
    });
  }

  /** Removes an owner nothing refers to (409 while a subscription does). */
  async delete(tenant: Tenant, id: Id): Promise<void> {
    await this.deps.uow.run(async (r) => {
      assertAccessible(await r.customers.get(id), tenant, 'owner');
      if ((await r.subscriptions.countReferencing({ customerId: id })) > 0)
        fail(ErrorCodes.CONFLICT, 'the owner has subscriptions and cannot be deleted');
      await r.customers.delete(id);
    });
  }
}
