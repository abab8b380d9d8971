// Seeding of the benchmark databases: an organisation with the sample catalog through the real use
// cases, then licenses (and catalog products) copied from a real row by generate_series, in chunks,
// with triggers off (no change-feed notification per row) and ANALYZE at the end.
const { sql } = require('kysely');
const { createRuntime, loadConfig } = require('@tollgate/runtime');
const { purchase, seedOrganisation } = require('@tollgate/runtime/testing');

const CHUNK = 50_000;

/** A text progress bar on stderr: `label [#####.....] 42% 420000/1000000`. */
function progress(label, done, total) {
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(
    `\r  ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor((done / total) * 100)).padStart(3)}% ${done}/${total}`,
  );
  if (done >= total) process.stderr.write('\n');
}

/** Runs `fn` on one connection with triggers and foreign-key checks off (superuser, seeding only). */
async function withoutTriggers(db, fn) {
  await db.connection().execute(async (conn) => {
    await sql`set session_replication_role = replica`.execute(conn);
    try {
      await fn(conn);
    } finally {
      await sql`set session_replication_role = default`.execute(conn);
    }
  });
}

/**
 * Seeds a database for the check: organisation `bench` with the sample catalog and keys, then
 * `licenses` licenses of the notes product over `licenses / 10` grantees `user-<n>` (ten licenses
 * each, on two plans). Returns what the benchmark needs to call it.
 */
async function seedCheck(env, { licenses, products = 0 }) {
  const runtime = await createRuntime(loadConfig({ ...env, RUN_WORKER: 'false', LOG_REQUESTS: 'false' }), {
    logger: { info() {}, error: (m, f) => console.error(m, f) },
  });
  try {
    const { core } = runtime;
    const db = runtime.database.db;
    const org = await seedOrganisation(runtime, 'bench');
    const {
      licenses: [template],
    } = await core.licenses.createAdHoc(org.tenant, [
      { planUuid: org.keys['plans.notes.team'], member: 'bench@example.com', granteeId: 'template' },
    ]);
    // A subscription to add 1 000 seats to.
    const { subscription } = await purchase(runtime, org.keys['plans.notes.team'], 'seat-owner', 2);
    const grantees = Math.max(1, Math.floor(licenses / 10));
    const started = Date.now();
    await withoutTriggers(db, async (conn) => {
      for (let from = 1; from <= licenses; from += CHUNK) {
        const to = Math.min(licenses, from + CHUNK - 1);
        await sql`
          insert into licenses (id, organisation_id, product_id, plan_id, grantee_id, purchaser, email, name, status, type,
            start_time, end_time, created_at, updated_at, is_test, metadata, payment_service, subscription_id, cancel_at_period_end)
          select gen_random_uuid(), t.organisation_id, t.product_id,
            case when g % 2 = 0 then t.plan_id else ${org.keys['plans.notes.business']}::uuid end,
            'user-' || (g % ${grantees}), t.purchaser, t.email, t.name, t.status, t.type,
            t.start_time, t.end_time, t.created_at, t.updated_at, t.is_test, t.metadata, t.payment_service, null, false
          from generate_series(${from}::int, ${to}::int) g, (select * from licenses where id = ${template.id}::uuid) t`.execute(conn);
        progress(`${licenses} licenses`, to, licenses);
      }
    });
    const licenseSeconds = (Date.now() - started) / 1000;
    let catalog;
    if (products > 0) catalog = await seedProducts(runtime, products);
    await sql`analyze`.execute(db);
    return { org, grantees, licenseSeconds, catalog, product: org.keys['products.notes'], subscriptionId: subscription.id };
  } finally {
    await runtime.close();
  }
}

/** Organisation `catalog-bench` with `count` products (copies of one real product), for the catalog's paging. */
async function seedProducts(runtime, count) {
  const { core } = runtime;
  const db = runtime.database.db;
  const organisation = await core.apiKeys.ensureOrganisation('catalog-bench');
  const key = await core.apiKeys.create({ organisation: 'catalog-bench', scopes: ['products:read'], isTest: false });
  const tenant = { organisationId: organisation.id, isTest: false };
  const template = await core.products.createProduct(tenant, { name: 'Template product' });
  const started = Date.now();
  await withoutTriggers(db, async (conn) => {
    for (let from = 1; from <= count; from += CHUNK) {
      const to = Math.min(count, from + CHUNK - 1);
      const id = sql`md5('bench-product-' || g)::uuid`;
      await sql`
        insert into products (id, organisation_id, is_test, name, display_name, description, app_type, paid, key,
          payment_integration_id, payment_product_id, archived_at, created_at, updated_at)
        select ${id}, t.organisation_id, t.is_test, 'Product ' || g, 'Product ' || g, t.description, t.app_type, t.paid, null,
          null, null, null, timestamptz '2020-01-01T00:00:00Z' + g * interval '1 second', t.updated_at
        from generate_series(${from}::int, ${to}::int) g, (select * from products where id = ${template.id}::uuid) t`.execute(conn);
      await sql`
        insert into product_settings (id, product_id, allow_promo_codes, automatic_tax, cancel_url, card_prefill_preference,
          collect_billing_address, collect_shipping_address, past_due_entitlements, success_url, created_at, updated_at)
        select gen_random_uuid(), ${id}, s.allow_promo_codes, s.automatic_tax, s.cancel_url, s.card_prefill_preference,
          s.collect_billing_address, s.collect_shipping_address, s.past_due_entitlements, s.success_url, s.created_at, s.updated_at
        from generate_series(${from}::int, ${to}::int) g, (select * from product_settings where product_id = ${template.id}::uuid) s`.execute(
        conn,
      );
      progress(`${count} products`, to, count);
    }
  });
  const seconds = (Date.now() - started) / 1000;
  // The cursor of the product 1 000 before the end (in list order): the page after it is deep.
  const deep = await sql`
    select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from products
    where organisation_id = ${tenant.organisationId}::uuid and is_test = false and archived_at is null
    order by created_at, id offset ${count - 1000} limit 1`.execute(db);
  const row = deep.rows[0];
  const cursor = Buffer.from(JSON.stringify([row.at, row.id]), 'utf8').toString('base64url');
  return { key: key.plaintext, deepCursor: cursor, seconds };
}

module.exports = { seedCheck, progress };
