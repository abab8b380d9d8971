import type { CustomerRepository } from '../../ports';
import { type Tables, copy, inTenant, values } from './tables';

export function customerRepository(db: Tables): CustomerRepository {
  return {
    get: async (id) => copy(db.customers.get(id)),
    findByValue: async (t, v) => values(db.customers).find((c) => inTenant(c, t) && c.value === v),
    save: async (c) => void db.customers.set(c.id, copy(c)),
  };
}
