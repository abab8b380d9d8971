import { type Customer, type CustomerRepository, type Tenant } from '@tollgate/core';
import type { Selectable } from 'kysely';
import type { DB } from '../schema';
import { containing, findOrInsert, keysetPage, tenantOf, upsert, type Db } from './db';

const toCustomer = (r: Selectable<DB['customers']>): Customer => ({
  id: r.id,
  organisationId: r.organisation_id,
  isTest: r.is_test,
  value: r.value,
  emailAddress: r.email_address,
  paymentCustomerId: r.payment_customer_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function customerRepository(db: Db): CustomerRepository {
  const findByValue = async (t: Tenant, v: string) => {
    const r = await db
      .selectFrom('customers')
      .selectAll()
      .where((eb) => eb.and(tenantOf(t)))
      .where('value', '=', v)
      .executeTakeFirst();
    return r && toCustomer(r);
  };
  return {
    get: async (id) => {
      const r = await db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toCustomer(r);
    },
    findByValue,
    findOrCreate: (c) =>
      findOrInsert(
        'customer',
        () => findByValue(c, c.value),
        async () => {
          const inserted = await db
            .insertInto('customers')
            .values(customerRow(c))
            .onConflict((oc) => oc.columns(['organisation_id', 'is_test', 'value']).doNothing())
            .returningAll()
            .executeTakeFirst();
          return inserted && toCustomer(inserted);
        },
      ),
    page: async (t, q) => {
      const page = await keysetPage(
        () => {
          let b = db
            .selectFrom('customers as cu')
            .selectAll('cu')
            .where((eb) => eb.and({ 'cu.organisation_id': t.organisationId, 'cu.is_test': t.isTest }));
          if (q.search) {
            const like = containing(q.search);
            b = b.where((eb) => eb.or([eb('cu.value', 'ilike', like), eb('cu.email_address', 'ilike', like)]));
          }
          if (q.paymentCustomerId) b = b.where('cu.payment_customer_id', '=', q.paymentCustomerId);
          return b;
        },
        'cu',
        q,
      );
      return { ...page, items: page.items.map(toCustomer) };
    },
    delete: async (id) => void (await db.deleteFrom('customers').where('id', '=', id).execute()),
    save: (c) => upsert(db, 'customers', [customerRow(c)]),
  };
}

const customerRow = (c: Customer) => ({
  id: c.id,
  organisation_id: c.organisationId,
  is_test: c.isTest,
  value: c.value,
  email_address: c.emailAddress,
  payment_customer_id: c.paymentCustomerId,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});
