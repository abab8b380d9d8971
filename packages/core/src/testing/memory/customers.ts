import type { CustomerRepository } from '../../ports';
import { pageOf } from '../../support/pagination';
import { type Tables, copy, inTenant, values } from './tables';

export function customerRepository(db: Tables): CustomerRepository {
  return {
    get: async (id) => copy(db.customers.get(id)),
    findByValue: async (t, v) => values(db.customers).find((c) => inTenant(c, t) && c.value === v),
    findOrCreate: async (c) => {
      const found = values(db.customers).find((x) => inTenant(x, c) && x.value === c.value);
      if (found) return found;
      db.customers.set(c.id, copy(c));
      return copy(c);
    },
    save: async (c) => void db.customers.set(c.id, copy(c)),
    page: async (t, q) => {
      const search = q.search?.toLowerCase();
      return pageOf(
        values(db.customers).filter(
          (c) =>
            inTenant(c, t) &&
            (!search || c.value.toLowerCase().includes(search) || (c.emailAddress ?? '').toLowerCase().includes(search)) &&
            (!q.paymentCustomerId || c.paymentCustomerId === q.paymentCustomerId),
        ),
        q,
      );
    },
    delete: async (id) => void db.customers.delete(id),
  };
}
