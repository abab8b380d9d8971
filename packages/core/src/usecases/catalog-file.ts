import { ErrorCodes, fail, invalid } from '../errors';
import type {
  Capability,
  Currency,
  EnumOption,
  Feature,
  FeatureValueType,
  Id,
  Interval,
  LicenseType,
  LineItem,
  Meter,
  Plan,
  PlanFeatureValue,
  PricingTable,
  Product,
  Tenant,
} from '../model';
import { INTERVALS } from '../model';
import { newPlan, newProduct } from '../domain/builders';
import { assertAccessible } from '../domain/tenancy';
import { effectiveStatus } from '../domain/subscription';
import { assertProductOpen, currencyExponent, toMajor, toMinor, usagePricedIn } from '../domain/catalog';
import { exactNumber, formatUnits, MAX_SCALE, METER_SLUG, termSteps } from '../domain/usage';
import { AMOUNT_PLACES, assertTierBounds, MAX_AMOUNT_MINOR, scanRecurringBilling, usageTermsOf } from './catalog/plan-pricing';
import { AMOUNT_SIGNIFICANT_DIGITS, exactDecimal, shiftDecimal, significantDigits } from '../domain/usage-billing';
import { intervalPricingProviders, planHolds, refuseCurrencyRemoval, refuseIntervalChange } from './catalog/plan-holds';
import type { Repositories } from '../ports';
import { limitsOf, type CoreDeps } from './deps';
import { DEFAULT_PAYMENT_INTEGRATION, ensurePaymentIntegration } from './integrations';
import { isCurrencyCode } from '../support/money';
import { isUuid } from '../support/text';
import { assertOrganisationName } from './api-keys';

/** The catalog file (DESIGN.md section 9), already parsed from YAML or JSON. */
/**
 * Records a record's fate (`created`, `updated` or unchanged), with what an updated plan's grants
 * gain and lose; true when it must be written.
 */
type Count = (key: string, before: unknown, after: unknown, grants?: GrantChange) => boolean;

export interface CatalogFile {
  organisation: string;
  test?: boolean;
  products?: ProductEntry[];
}
export interface FeatureEntry {
  key: string;
  displayName?: string;
  description?: string;
  valueType: FeatureValueType;
  enumOptions?: string[];
  defaultValue?: string;
  showUnlimited?: boolean;
  visibility?: 'public' | 'private';
}
export interface PlanEntry {
  key: string;
  displayName?: string;
  description?: string;
  pricingType: 'free' | 'paid';
  licenseType?: LicenseType;
  perSeatAmount?: number;
  interval?: Interval;
  length?: number;
  evaluation?: boolean;
  evalDays?: number;
  trialDays?: number | null;
  usageBased?: boolean;
  visibility?: 'public' | 'private';
  active?: boolean;
  prices?: Record<string, number>;
  /** Usage plan terms: one metered line item per meter, beside the plan's price. */
  usage?: UsageEntry[];
  capabilities?: string[];
  features?: Record<string, string>;
}
/** A usage plan's terms on one meter (prices in major units per currency, as `prices`). */
export interface UsageEntry {
  /** The meter's slug (`^[a-z0-9_]+$`): the tenant's meter, created when new. */
  meter: string;
  /**
   * The meter's decimal places (0 to 6; 0, whole units, when absent): what a new meter is made
   * with. An existing meter keeps its own, and a file naming another is refused (a meter's scale
   * never changes). Written by export when the meter has decimals, so a copy to live mode or to
   * another organisation makes the same meter.
   */
  scale?: number;
  name?: string;
  unitLabel?: string | null;
  allowance?: number;
  maxUsage?: number | null;
  minUsage?: number;
  rollover?: 'none' | 'all' | { upTo: number };
  /** Price of one unit per currency (major units; fractions of the minor unit allowed). */
  unitPrices?: Record<string, number>;
  /** Tiers per currency instead of unit prices; `upTo` a number of units (decimals on a decimal meter) or `inf`. */
  tiers?: Record<string, { upTo: number | 'inf'; unitAmount: number; flatAmount?: number | null }[]>;
  tiersMode?: 'graduated' | 'volume';
}

export interface PricingTableEntry {
  key: string;
  name?: string;
  title?: string;
  text?: string;
  theme?: string;
  plans?: string[];
  featuredPlan?: string;
  features?: string[];
}
export interface ProductEntry {
  key: string;
  name: string;
  displayName?: string;
  description?: string;
  currencies?: string[];
  capabilities?: string[];
  features?: FeatureEntry[];
  plans?: PlanEntry[];
  pricingTables?: PricingTableEntry[];
}

export interface ImportResult {
  organisationId: Id;
  /** Catalog-file keys mapped to uuids: `products.notes`, `plans.notes.team`, `pricingTables.notes.main`. */
  keys: Record<string, Id>;
  created: number;
  updated: number;
  unchanged: number;
  /**
   * What the file changed (or, dry run, would change), record by record, in file order; an updated
   * plan whose capabilities or feature values change says which (`grants`).
   */
  changes: { key: string; change: 'created' | 'updated'; grants?: GrantChange }[];
}

/**
 * What an import changes in the grants of a plan the file names: the plan's `capabilities` and
 * `features` are its whole set, so one the file leaves out is taken from the plan. An import never
 * changes the grants of a plan it does not name (it never deletes a capability or feature).
 */
export interface GrantChange {
  capabilities: { added: string[]; removed: string[] };
  /** Feature key to its value before and after (`null`: none, the feature's default applies). */
  features: Record<string, { before: string | null; after: string | null }>;
  /** The plan's running subscriptions (not canceled): their licenses gain and lose these at their next check. */
  runningSubscriptions: number;
}

/** Thrown inside a dry run's transaction to roll it back with its result. */
class DryRun {
  constructor(readonly result: ImportResult) {}
}

const LICENSE_TYPES: readonly LicenseType[] = ['user', 'perSeat', 'board', 'customId'];

const KNOWN_CURRENCIES: Record<string, [string, string]> = {
  USD: ['US Dollar', '$'],
  EUR: ['Euro', '€'],
  GBP: ['Pound Sterling', '£'],
  JPY: ['Yen', '¥'],
  CHF: ['Swiss Franc', 'CHF'],
  CAD: ['Canadian Dollar', 'CA$'],
  AUD: ['Australian Dollar', 'A$'],
  SEK: ['Swedish Krona', 'kr'],
  NOK: ['Norwegian Krone', 'kr'],
  DKK: ['Danish Krone', 'kr'],
};

/**
 * Compares two records ignoring timestamps and the order of their members (an adapter builds its
 * records in its own order), so re-importing an unchanged file writes nothing.
 */
const stripTimes = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(stripTimes);
  if (v instanceof Date) return v.toISOString();
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        // An absent member and a null one are the same (a line item's `usage` is either).
        .filter(([k, x]) => k !== 'updatedAt' && k !== 'createdAt' && x !== null && x !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, x]) => [k, stripTimes(x)]),
    );
  }
  if (typeof v === 'bigint') return String(v);
  return v;
};
const same = (a: unknown, b: unknown) => JSON.stringify(stripTimes(a)) === JSON.stringify(stripTimes(b));

function requireKey(where: string, key: unknown): string {
  if (typeof key !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(key))
    return invalid(`${where}.key`, 'must be a non-empty string of letters, digits, _, . or -');
  return key;
}

/**
 * The rules over a catalog file a JSON Schema cannot state, checked before the import opens its
 * transaction (400 naming the path): a product key named twice in the file, or a plan, feature or
 * pricing table key twice within its product; a plan's `perSeatAmount` above the deployment's
 * `MAX_SEATS`. The file's shape (types, required and unknown keys, enumerations, ranges) is the
 * JSON Schema's (`packages/http/assets/catalog-file.schema.json`), which both entry points check
 * with ajv before they call the import; the rules that need the database follow.
 */
export function assertCatalogFileRules(file: CatalogFile, maxSeats: number): void {
  const unique = (list: unknown, at: string, what: string) => {
    const first = new Map<string, number>();
    for (const [i, x] of (Array.isArray(list) ? (list as { key?: unknown }[]) : []).entries()) {
      if (typeof x?.key !== 'string') continue;
      const j = first.get(x.key);
      if (j !== undefined) invalid(`${at}[${i}].key`, `${what} key ${x.key} is named twice (${at}[${j}] and ${at}[${i}])`);
      first.set(x.key, i);
    }
  };
  const products = Array.isArray(file.products) ? file.products : [];
  unique(products, 'products', 'product');
  for (const [i, p] of products.entries()) {
    unique(p?.features, `products[${i}].features`, 'feature');
    unique(p?.plans, `products[${i}].plans`, 'plan');
    unique(p?.pricingTables, `products[${i}].pricingTables`, 'pricing table');
    for (const [j, plan] of (Array.isArray(p?.plans) ? p.plans : []).entries()) {
      const seats: unknown = plan?.perSeatAmount;
      if (seats !== undefined && !(typeof seats === 'number' && Number.isInteger(seats) && seats >= 1 && seats <= maxSeats))
        invalid(`products[${i}].plans[${j}].perSeatAmount`, `must be a whole number from 1 to ${maxSeats}, got ${JSON.stringify(seats)}`);
    }
  }
}

/**
 * Applies a catalog file: creates or updates records matched by `key` within the organisation, all
 * in one transaction. Applying the same file twice changes nothing.
 */
export class CatalogFileImport {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'payments' | 'freeCheckout' | 'limits'>) {}

  /**
   * A catalog file sent by an API key: applied to the key's organisation and mode. A file that
   * names another organisation is refused (403), one of the other mode too (400).
   */
  async applyFor(tenant: Tenant, file: Partial<CatalogFile>): Promise<ImportResult> {
    if (!file || typeof file !== 'object' || Array.isArray(file)) return invalid('file', 'must be a catalog file (an object)');
    const org = (await this.deps.uow.read((r) => r.organisations.get(tenant.organisationId))) as { name: string };
    if (file.organisation !== undefined && file.organisation !== org.name)
      fail(ErrorCodes.FORBIDDEN, 'the file names another organisation than the API key');
    if (file.test !== undefined && !!file.test !== tenant.isTest)
      invalid('test', `this API key acts in ${tenant.isTest ? 'test' : 'live'} mode; the file is for the other`);
    return this.apply({ ...file, organisation: org.name, test: tenant.isTest });
  }

  /**
   * Applies the file in one transaction. `dryRun`: every check and write happens, then the
   * transaction is rolled back; the result says what would change. `createOrganisation`: the
   * file's organisation is made when there is none, in the same transaction (a failed import leaves
   * no organisation behind). `heldCurrencies`: codes the file's source already holds (copy to live
   * mode: the test product's), taken though the published list lacks them, as a re-import takes a
   * record's own.
   */
  async apply(
    file: CatalogFile,
    options: { dryRun?: boolean; createOrganisation?: boolean; heldCurrencies?: ReadonlySet<string> } = {},
  ): Promise<ImportResult> {
    if (!file || typeof file !== 'object' || Array.isArray(file)) invalid('file', 'must be a catalog file (an object)');
    if (typeof file.organisation !== 'string' || !file.organisation) invalid('organisation', 'is required');
    assertCatalogFileRules(file, limitsOf(this.deps).maxSeats);
    const held = new Set([...(options.heldCurrencies ?? [])].map((c) => c.toUpperCase()));
    if (!options.dryRun) return this.applyIn(file, held, false, options.createOrganisation);
    try {
      await this.applyIn(file, held, true, options.createOrganisation);
    } catch (e) {
      if (e instanceof DryRun) return e.result;
      throw e;
    }
    throw new Error('unreachable: a dry run always rolls back');
  }

  private async applyIn(file: CatalogFile, held: ReadonlySet<string>, dryRun = false, createOrganisation = false): Promise<ImportResult> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      let org = await r.organisations.findByName(file.organisation);
      if (!org && createOrganisation) {
        // A new organisation is named by the rule of every new one (an existing one is found as named).
        assertOrganisationName(file.organisation, 'organisation');
        org = { id: this.deps.ids.newId(), name: file.organisation, createdAt: now };
        await r.organisations.save(org);
      }
      if (!org) return fail(ErrorCodes.ORGANISATION_NOT_FOUND, `no organisation named ${file.organisation}`);
      const tenant: Tenant = { organisationId: org.id, isTest: !!file.test };
      const result: ImportResult = { organisationId: org.id, keys: {}, created: 0, updated: 0, unchanged: 0, changes: [] };
      const count: Count = (key, before, after, grants) => {
        if (!before) result.created++;
        else if (same(before, after)) result.unchanged++;
        else result.updated++;
        const changed = !before || !same(before, after);
        if (changed) result.changes.push({ key, change: before ? 'updated' : 'created', ...(before && grants ? { grants } : {}) });
        return changed;
      };
      const currencies = await this.ensureCurrencies(r, file.products ?? []);
      const locked = await this.lockProducts(r, tenant, file.products ?? []);
      // Records created by one import get distinct creation instants in file order, so lists that
      // order by creation show them as the file does.
      let seq = 0;
      const created = () => new Date(now.getTime() + seq++);
      for (const entry of file.products ?? [])
        await this.product(r, tenant, entry, locked.get(entry.key), currencies, held, now, created, result, count);
      if (dryRun) throw new DryRun(result);
      return result;
    });
  }

  /**
   * The file's products that exist, each read again under its row lock (`getForUpdate`, the lock the
   * catalog API's writes take), all of them before any plan is read, and in id order. Every write of
   * a product or plan locks the product first (`catalog/locks.ts`), so the import, holding the
   * products, reads their plans and pricing tables as last committed and no write changes them until
   * it ends; two imports naming the same products in other orders take their locks in one order.
   * Read under the lock, an archive committed meanwhile is seen (and refused below), never written
   * over from an older read.
   *
   * A lock may have been waited for (another import of the same products): the keys not found are
   * looked up again once the locks are held, and those made meanwhile (by the import waited for) are
   * locked in turn (in id order), so the import updates what the other created instead of creating
   * it again (a 409 on the key); until a round finds none new (each may have waited again).
   */
  private async lockProducts(r: Repositories, tenant: Tenant, entries: ProductEntry[]): Promise<Map<string, Product>> {
    const found = new Map<string, Id>();
    const byId = new Map<Id, Product | undefined>();
    let missing = entries.map((e) => requireKey('products', e.key));
    for (;;) {
      const fresh: Id[] = [];
      for (const key of missing) {
        const p = await this.findProduct(r, tenant, key);
        if (p) found.set(key, p.id);
        if (p && !byId.has(p.id) && !fresh.includes(p.id)) fresh.push(p.id);
      }
      // None new: nothing more was locked, so nothing more waited for.
      if (fresh.length === 0) break;
      for (const id of fresh.sort()) byId.set(id, await r.products.getForUpdate(id));
      missing = missing.filter((key) => !found.has(key));
      if (missing.length === 0) break;
    }
    const out = new Map<string, Product>();
    // One deleted meanwhile is made anew, as if the import had come after the delete.
    for (const [key, id] of found) {
      const p = byId.get(id);
      if (p) out.set(key, p);
    }
    return out;
  }

  /** The tenant's product of this file key: by its key, or a keyless one (made by the API) by its id, as the export names it. */
  private async findProduct(r: Repositories, tenant: Tenant, key: string): Promise<Product | undefined> {
    return (
      (await r.products.findByKey(tenant, key)) ??
      (await (isUuid(key) ? r.products.get(key) : Promise.resolve(undefined)).then((x) =>
        x && x.key === null && x.organisationId === tenant.organisationId && x.isTest === tenant.isTest ? x : undefined,
      ))
    );
  }

  /**
   * The live product of a file key and, with `planKey`, its plan of that key (copy to live mode
   * names them in its refusals), outside any transaction.
   */
  async lookUp(tenant: Tenant, productKey: string, planKey?: string): Promise<{ productId?: Id; planId?: Id }> {
    return this.deps.uow.read(async (r) => {
      const product = await this.findProduct(r, tenant, productKey);
      if (!product || planKey === undefined) return { productId: product?.id };
      return { productId: product.id, planId: (await this.findPlan(r, product, planKey))?.id };
    });
  }

  private async findPlan(r: Repositories, product: Product, key: string): Promise<Plan | undefined> {
    return (
      (await r.plans.findByKey(product.id, key)) ??
      (await (isUuid(key) ? r.plans.get(key) : Promise.resolve(undefined)).then((p) =>
        p && p.key === null && p.productId === product.id ? p : undefined,
      ))
    );
  }

  private async ensureCurrencies(r: Repositories, products: ProductEntry[]): Promise<Map<string, Currency>> {
    const byName = new Map((await r.currencies.list()).map((c) => [c.shortName, c]));
    const wanted = new Set<string>();
    for (const p of products) {
      for (const c of p.currencies ?? []) wanted.add(c.toUpperCase());
      for (const plan of p.plans ?? []) for (const c of Object.keys(plan.prices ?? {})) wanted.add(c.toUpperCase());
    }
    // In code order: two imports adding the same new codes insert them in one order (`short_name` is
    // unique: in file order, [EUR, GBP] and [GBP, EUR] could each wait for the other's insert).
    for (const name of [...wanted].sort()) {
      if (!/^[A-Z]{3}$/.test(name)) invalid('currencies', `${name} is not a three-letter currency code`);
      if (byName.has(name)) continue;
      const [longName, symbol] = KNOWN_CURRENCIES[name] ?? [name, name];
      const c: Currency = { id: this.deps.ids.newId(), shortName: name, longName, symbol };
      await r.currencies.save(c);
      byName.set(name, c);
    }
    return byName;
  }

  private async product(
    r: Repositories,
    tenant: Tenant,
    e: ProductEntry,
    existing: Product | undefined,
    currencies: Map<string, Currency>,
    held: ReadonlySet<string>,
    now: Date,
    created: () => Date,
    result: ImportResult,
    count: Count,
  ): Promise<void> {
    const key = requireKey('products', e.key);
    if (typeof e.name !== 'string' || !e.name) invalid(`products.${key}.name`, 'is required');
    // A new currency is one of the published list (the catalog API's); one the product already has
    // stays accepted on a re-import though the list lacks it (as plans/save keeps a plan's), and so
    // does one the file's source holds (`held`: a copy to live mode carries the test product's).
    const heldByProduct = new Set([...held, ...(existing?.currencies.map((pc) => shortNameOf(currencies, pc.currencyId)) ?? [])]);
    for (const c of e.currencies ?? [])
      if (!isCurrencyCode(c.toUpperCase()) && !heldByProduct.has(c.toUpperCase()))
        invalid(`products.${key}.currencies`, `${c} is not a currency code of the published list (e.g. USD)`);
    const base =
      existing ?? newProduct(tenant, { id: this.deps.ids.newId(), settingsId: this.deps.ids.newId() }, { name: e.name }, created());

    // Nothing is ever deleted by an import: the product's capabilities and features are merged, the
    // file's first (created or updated, in file order), then those it leaves out, kept as they are
    // (in their order). Deleting one would take it from every plan granting it, plans the file does
    // not name included, and from the licenses customers paid for.
    const named = new Set(e.capabilities ?? []);
    const capabilities: Capability[] = [
      ...[...named].map((name): Capability => {
        const prev = base.capabilities.find((c) => c.name === name);
        return (
          prev ?? { id: this.deps.ids.newId(), productId: base.id, name, description: '', status: 'ACTIVE', createdAt: now, updatedAt: now }
        );
      }),
      ...base.capabilities.filter((c) => !named.has(c.name)),
    ];
    const fileFeatures: Feature[] = (e.features ?? []).map((f, i) => this.feature(base, f, i, now));
    const features: Feature[] = [
      ...fileFeatures,
      ...[...base.features]
        .filter((f) => !fileFeatures.some((x) => x.id === f.id))
        .sort((a, b) => a.sortOrder - b.sortOrder)
        .map((f, j) => ({ ...f, sortOrder: fileFeatures.length + j })),
    ];
    // The product's plans the file does not name keep their grants: a feature whose type the file
    // changes would change what they grant (their values are of the old type), so it is refused
    // while one of them has a value of it (name those plans with new values, or use a new key).
    const storedPlans = existing ? await r.plans.listByProduct(existing.id) : [];
    const planKeys = new Set((e.plans ?? []).map((pe) => pe.key));
    const unnamed = storedPlans.filter((p) => !(p.key !== null ? planKeys.has(p.key) : planKeys.has(p.id)));
    for (const f of fileFeatures) {
      const before = base.features.find((x) => x.id === f.id);
      if (!before || before.valueType === f.valueType) continue;
      const holders = unnamed.filter((p) => p.features.some((v) => v.featureId === f.id));
      // An archived plan cannot be given new values (PLAN_ARCHIVED): with one among them, only a new key will do.
      if (holders.length)
        invalid(
          `features.${f.key}.valueType`,
          `plans ${holders.map((p) => `${p.key ?? p.id}${p.archivedAt ? ' (archived)' : ''}`).join(', ')} (not in the file) have a ${before.valueType} value of feature ${f.key}: ${
            holders.some((p) => p.archivedAt)
              ? 'an archived plan cannot be given new values, so give the feature another key'
              : 'name them in the file with new values, or give the feature another key'
          }`,
        );
    }
    // The product's currencies: the file's (its first the default), then those it leaves out that a
    // plan it does not name (archived ones too: the product's own export must import again) is priced
    // in; a currency nothing left prices in is removed (the pricing page's currency switch and
    // checkout's default follow this list; a running subscription's currency is refused below). A
    // file without `currencies` keeps the list as it is; an empty list keeps the default of those kept.
    const fileCurrencies = [...new Set((e.currencies ?? []).map((c) => (currencies.get(c.toUpperCase()) as Currency).id))];
    const codeOf = new Map([...currencies.values()].map((c) => [c.id, c.shortName.toUpperCase()]));
    const pricedByUnnamed = (currencyId: string) =>
      unnamed.some(
        (p) =>
          p.currencies.some((c) => c.currencyId === currencyId) ||
          p.lineItems.some((li) =>
            li.prices.some((pr) => pr.currencyOptions.some((o) => o.currency.toUpperCase() === codeOf.get(currencyId))),
          ),
      );
    const kept = base.currencies.filter((pc) => !fileCurrencies.includes(pc.currencyId) && pricedByUnnamed(pc.currencyId));
    const productCurrencies =
      e.currencies === undefined
        ? base.currencies
        : fileCurrencies.length === 0
          ? kept.map((pc, i) => ({ ...pc, isDefault: kept.some((k) => k.isDefault) ? pc.isDefault : i === 0 }))
          : [
              ...fileCurrencies.map((currencyId, i) => ({ currencyId, isDefault: i === 0 })),
              ...kept.map((pc) => ({ ...pc, isDefault: false })),
            ];
    const integration = base.paymentIntegrationId
      ? null
      : await ensurePaymentIntegration(r, tenant, DEFAULT_PAYMENT_INTEGRATION, this.deps.ids, now);
    const product: Product = {
      ...base,
      paymentIntegrationId: base.paymentIntegrationId ?? integration?.id ?? null,
      // Found by its id, a product made through the API stays keyless (as its plans): the next
      // import finds it so again, and an unchanged file leaves it unchanged (archived too).
      key: existing?.key === null ? null : key,
      name: e.name,
      displayName: e.displayName ?? e.name,
      description: e.description ?? '',
      // Derived from its plans, which the file cannot change while the product is archived: an
      // archived one keeps what it has (the API never sets it: its own export must stay unchanged).
      // A plan the file does not name counts as it is.
      paid: existing?.archivedAt
        ? existing.paid
        : (e.plans ?? []).some((p) => p.pricingType === 'paid') || unnamed.some((p) => !p.archivedAt && p.pricingType === 'paid'),
      currencies: productCurrencies,
      capabilities,
      features,
      updatedAt: existing ? now : base.createdAt,
    };
    // An archived product is read-only with its plans and pricing tables (the catalog API's rule): a
    // file may name it unchanged; one that changes it is refused, and the import writes nothing.
    if (existing && !same(existing, product))
      assertProductOpen(existing, `products.${key}`, archivedProductMessage(key), 'changes an archived product');
    if (count(`products.${key}`, existing, product)) await r.products.save(product);
    result.keys[`products.${key}`] = product.id;

    const plansByKey = new Map<string, Plan>();
    for (const pe of e.plans ?? []) {
      const plan = await this.plan(
        r,
        tenant,
        product,
        { product: existing, plans: storedPlans },
        e.currencies ?? [],
        pe,
        currencies,
        held,
        now,
        created,
        count,
      );
      // A plan made through the API is named by its id (it stays keyless).
      const planKey = plan.key ?? plan.id;
      plansByKey.set(planKey, plan);
      result.keys[`plans.${key}.${planKey}`] = plan.id;
    }
    const tables = await r.pricingTables.listByProduct(product.id);
    for (const te of e.pricingTables ?? []) {
      const tkey = requireKey(`products.${key}.pricingTables`, te.key);
      const prev = tables.find((t) => t.key === tkey) ?? tables.find((t) => t.key === null && t.id === tkey);
      // A table may list a plan the product keeps though the file does not name it (by its key, or
      // its id when keyless), as plans may name the features it keeps.
      const planOf = (k: string) => plansByKey.get(k) ?? storedPlans.find((p) => (p.key ?? p.id) === k);
      const planIds = (te.plans ?? []).map((k) => planOf(k)?.id ?? invalid(`pricingTables.${tkey}.plans`, `unknown plan ${k}`));
      const featureIds = (te.features ?? []).map(
        (k) => features.find((f) => f.key === k)?.id ?? invalid(`pricingTables.${tkey}.features`, `unknown feature ${k}`),
      );
      const table: PricingTable = {
        id: prev?.id ?? this.deps.ids.newId(),
        organisationId: tenant.organisationId,
        isTest: tenant.isTest,
        productId: product.id,
        key: tkey,
        name: te.name ?? tkey,
        status: 'ACTIVE',
        title: te.title ?? '',
        text: te.text ?? '',
        theme: te.theme ?? 'light',
        featureOrder: 'asc',
        customTheme: null,
        featuredPlanId: te.featuredPlan
          ? (planOf(te.featuredPlan)?.id ?? invalid(`pricingTables.${tkey}.featuredPlan`, `unknown plan ${te.featuredPlan}`))
          : null,
        plans: planIds.map((planId, sortOrder) => ({ planId, sortOrder, updatedAt: now })),
        features: featureIds.map((featureId, sortOrder) => ({ featureId, sortOrder, updatedAt: now })),
        updatedAt: now,
      };
      if (!prev || !same(prev, table)) assertProductOpen(product, `pricingTables.${key}.${tkey}`, archivedProductMessage(key));
      if (count(`pricingTables.${key}.${tkey}`, prev, table)) await r.pricingTables.save(table);
      result.keys[`pricingTables.${key}.${tkey}`] = table.id;
    }
  }

  private feature(product: Product, f: FeatureEntry, sortOrder: number, now: Date): Feature {
    const key = requireKey(`products.${product.key ?? product.id}.features`, f.key);
    if (!['boolean', 'numerical', 'enum'].includes(f.valueType)) invalid(`features.${key}.valueType`, 'must be boolean, numerical or enum');
    const prev = product.features.find((x) => x.key === key) ?? product.features.find((x) => x.key === null && x.name === key);
    const id = prev?.id ?? this.deps.ids.newId();
    const listed = f.valueType === 'enum' ? (f.enumOptions ?? []) : [];
    const enumOptions: EnumOption[] = [
      ...listed.map((name) => {
        const o = prev?.enumOptions.find((x) => x.name === name);
        return o ?? { id: this.deps.ids.newId(), featureId: id, name, updatedAt: now };
      }),
      // An enum feature keeps the options the file leaves out (plans may hold them, the file's or not).
      ...(f.valueType === 'enum' && prev?.valueType === 'enum' ? prev.enumOptions.filter((o) => !listed.includes(o.name)) : []),
    ];
    if (f.valueType === 'enum' && enumOptions.length === 0) invalid(`features.${key}.enumOptions`, 'an enum feature needs options');
    return {
      id,
      productId: product.id,
      key,
      name: key,
      displayName: f.displayName ?? key,
      description: f.description ?? '',
      variableName: key,
      status: 'ACTIVE',
      visibility: f.visibility ?? 'public',
      valueType: f.valueType,
      defaultValue: f.defaultValue ?? '',
      showUnlimited: f.showUnlimited ?? false,
      sortOrder,
      enumOptions,
      updatedAt: now,
    };
  }

  private async plan(
    r: Repositories,
    tenant: Tenant,
    product: Product,
    stored: { product: Product | undefined; plans: Plan[] },
    fileCurrencies: string[],
    e: PlanEntry,
    currencies: Map<string, Currency>,
    held: ReadonlySet<string>,
    now: Date,
    created: () => Date,
    count: Count,
  ): Promise<Plan> {
    const productKey = product.key ?? product.id;
    const key = requireKey(`products.${productKey}.plans`, e.key);
    const where = `plans.${key}`;
    if (e.pricingType !== 'free' && e.pricingType !== 'paid') invalid(`${where}.pricingType`, 'must be free or paid');
    if (e.interval !== undefined && !INTERVALS.includes(e.interval)) invalid(`${where}.interval`, 'must be day, week, month or year');
    if (e.licenseType !== undefined && !LICENSE_TYPES.includes(e.licenseType))
      invalid(`${where}.licenseType`, `must be one of ${LICENSE_TYPES.join(', ')}, got ${String(e.licenseType)}`);
    // A price in a currency the product does not declare could never be shown or bought. A plan the
    // file names is priced in the currencies the file lists for its product (the CLI's check of the
    // file says the same), though the product keeps others for the plans the file leaves out.
    const declared = fileCurrencies.map((c) => c.toUpperCase());
    for (const name of Object.keys(e.prices ?? {}))
      if (!declared.includes(name.toUpperCase()))
        invalid(
          `${where}.prices.${name}`,
          declared.length
            ? `${name} is not one of the product's currencies (${declared.join(', ')}); add it to the product's currencies`
            : `${name} is not a currency of the product; list it in the product's currencies`,
        );
    // Read without the plan's row lock: the import holds its product's (taken when it began), and
    // every write of a plan takes its product's lock first (catalog/locks.ts), so none can change or
    // delete the plan until the import ends, and this read sees the last one committed.
    const existing = await this.findPlan(r, product, key);
    // A new currency of the plan is one of the published list; one the plan already has (its prices
    // or its line items' currency options) stays accepted, as plans/save keeps it, and so does one
    // the file's source holds (copy to live mode).
    const heldByPlan = new Set([
      ...held,
      ...(existing?.currencies.map((pc) => shortNameOf(currencies, pc.currencyId)) ?? []),
      ...(existing?.lineItems.flatMap((li) => li.prices.flatMap((p) => p.currencyOptions.map((o) => o.currency.toUpperCase()))) ?? []),
    ]);
    for (const name of Object.keys(e.prices ?? {}))
      if (!isCurrencyCode(name.toUpperCase()) && !heldByPlan.has(name.toUpperCase()))
        invalid(`${where}.prices.${name}`, `${name} is not a currency code of the published list (e.g. USD)`);
    const base = existing ?? newPlan(tenant, this.deps.ids.newId(), { name: key, productId: product.id }, created());
    // A plan made through the catalog API keeps its pricing tree (below): it bills by its recurring
    // prices' interval, which the file may repeat but not change (a new interval is a new plan).
    // One whose key is its own id is one too: imports before API plans stayed keyless gave them
    // their id as key (a file plan's key is the file's, never the id drawn for it); it is found by
    // that key and saved keyless again.
    const apiPlan = !!existing && (existing.key === null || existing.key === existing.id);
    const scanned = apiPlan ? scanRecurringBilling(base.lineItems) : undefined;
    if (scanned && 'mixed' in scanned)
      // Saved before prices of several intervals were refused: the file cannot mend it (it has no line items).
      invalid(
        where,
        `the plan's prices (saved through the catalog API) mix billing intervals (${scanned.mixed.property}: ${scanned.mixed.error}): save the plan with one interval through POST /api/plans/save, then import`,
      );
    const billing = scanned && !('mixed' in scanned) ? scanned : undefined;
    if (
      billing &&
      ((e.interval !== undefined && e.interval !== billing.interval) || (e.length !== undefined && e.length !== billing.length))
    )
      invalid(
        `${where}.${e.interval !== undefined && e.interval !== billing.interval ? 'interval' : 'length'}`,
        `the plan's prices (saved through the catalog API) recur every ${billing.length} ${billing.interval}(s): make a new plan for another interval`,
      );
    const capabilityIds = (e.capabilities ?? []).map(
      (n) => product.capabilities.find((c) => c.name === n)?.id ?? invalid(`${where}.capabilities`, `unknown capability ${n}`),
    );
    const features: PlanFeatureValue[] = Object.entries(e.features ?? {}).map(([fkey, raw]) => {
      const feature = product.features.find((f) => f.key === fkey) ?? invalid(`${where}.features`, `unknown feature ${fkey}`);
      const value = String(raw);
      const unlimited = feature.valueType === 'numerical' && value === 'unlimited';
      const option =
        feature.valueType === 'enum'
          ? (feature.enumOptions.find((o) => o.name === value) ?? invalid(`${where}.features.${fkey}`, `unknown option ${value}`))
          : null;
      return {
        featureId: feature.id,
        value: option || unlimited ? '' : value,
        enumOptionId: option?.id ?? null,
        isUnlimited: unlimited,
        isUsage: false,
        pricePerUnit: 0,
        minUsage: 0,
        maxUsage: 0,
        updatedAt: now,
      };
    });
    const planCurrencies = Object.entries(e.prices ?? {}).map(([name, amount]) => {
      const field = `${where}.prices.${name}`;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) invalid(field, 'must be a number of at least 0');
      const c = currencies.get(name.toUpperCase()) as Currency;
      // A plan's price is whole minor units (checkout, renewals and Stripe charge them), read on its
      // decimal text: more places than the currency's minor unit are refused, never rounded, and so
      // is more than the catalog API takes for a price (Stripe's largest unit_amount).
      const exponent = currencyExponent(c.shortName);
      if (exactDecimal(amount).places > exponent)
        invalid(
          field,
          exponent
            ? `must have at most ${exponent} decimal places (whole ${c.shortName} minor units), got ${amount}`
            : `must be a whole number of ${c.shortName} (it has no minor unit), got ${amount}`,
        );
      if (shiftDecimal(amount, exponent) > MAX_AMOUNT_MINOR) invalid(field, `must be at most ${shiftDecimal(MAX_AMOUNT_MINOR, -exponent)}`);
      return { currencyId: c.id, amountMinor: toMinor(amount, c.shortName), paymentPlanId: `${key}_${c.shortName.toLowerCase()}` };
    });
    const plan: Plan = {
      ...base,
      // Found by its id, a plan made through the API stays keyless: the next import finds it so again.
      key: apiPlan ? null : key,
      name: e.displayName ?? key,
      displayName: e.displayName ?? key,
      description: e.description ?? '',
      active: e.active ?? true,
      visibility: e.visibility ?? 'public',
      licenseType: e.licenseType ?? 'user',
      planType: e.evaluation ? 'evaluation' : 'standard',
      pricingType: e.pricingType,
      interval: billing?.interval ?? e.interval ?? (apiPlan ? base.interval : 'month'),
      length: billing?.length ?? e.length ?? (apiPlan ? base.length : 1),
      trialDays: e.trialDays ?? null,
      evaluation: e.evaluation ?? false,
      evalDays: e.evalDays ?? 0,
      perSeatAmount: e.perSeatAmount ?? 1,
      usageBased: e.usageBased ?? (e.usage ?? []).length > 0,
      capabilityIds,
      features,
      currencies: planCurrencies,
      updatedAt: existing ? now : base.createdAt,
    };
    // A plan made through the catalog API (found by its id: it has no key) keeps the pricing tree the
    // API gave it: the file describes prices at the level of legacy plans, and must not flatten it.
    plan.lineItems = apiPlan
      ? base.lineItems
      : [
          ...this.lineItemsOf(plan, base.lineItems, currencies, now, (e.usage ?? []).length > 0),
          ...(await this.usageLineItems(r, tenant, `${where}.usage`, e.usage ?? [], base.lineItems, currencies, plan, now)),
        ];
    // An archived plan cannot be modified, nor a plan of an archived product (new ones included): a
    // file may name them unchanged. The import is one transaction, so a refusal writes nothing.
    if (existing?.archivedAt && !same(existing, plan))
      fail(
        ErrorCodes.PLAN_ARCHIVED,
        `plan ${key} is archived: it cannot be modified (leave it out of the file, or give a new plan another key)`,
        [{ property: where, error: 'changes an archived plan' }],
      );
    if (!existing || !same(existing, plan)) assertProductOpen(product, where, archivedProductMessage(productKey));
    // Running subscriptions and open checkouts hold the plan's interval (a new interval is a new
    // plan); the import is one transaction, so a refusal writes nothing.
    if (existing && (plan.interval !== existing.interval || plan.length !== existing.length))
      refuseIntervalChange(
        await planHolds(r, existing.id, now, intervalPricingProviders(this.deps)),
        existing,
        `${where}.${plan.interval !== existing.interval ? 'interval' : 'length'}`,
      );
    // Running subscriptions (added plans included) are billed in their currency: a file that drops it
    // from the plan's prices is refused (their renewals would charge 0); amounts may change.
    // The refusal names the field that dropped the currency: `prices` when it lacks it, else the
    // first usage entry whose price charges but not in it (`unitPrices` or `tiers`).
    const droppedAt = (c: string) => {
      if (Object.keys(e.prices ?? {}).some((n) => n.toUpperCase() === c)) {
        const i = (e.usage ?? []).findIndex((u) => {
          const li = plan.lineItems.find((x) => x.usage && x.meter?.slug === u.meter);
          return li !== undefined && !usagePricedIn(li, c);
        });
        if (i >= 0) return `${where}.usage[${i}].${(e.usage ?? [])[i].tiers !== undefined ? 'tiers' : 'unitPrices'}.${c}`;
      }
      return `${where}.prices.${c}`;
    };
    if (existing && !same(existing, plan))
      await refuseCurrencyRemoval(r, existing, plan, await r.subscriptions.listByPlan(existing.id), now, droppedAt);
    // The plan's grants before the import: as read before the product was written (a feature made
    // enum to boolean loses its options there, and the plan's values of them with them), through
    // the product as stored.
    const grants =
      existing && !same(existing, plan)
        ? await this.grantChange(
            r,
            stored.product ?? product,
            product,
            stored.plans.find((p) => p.id === existing.id) ?? existing,
            plan,
            now,
          )
        : undefined;
    if (count(`plans.${productKey}.${key}`, existing, plan, grants)) await r.plans.save(plan);
    return plan;
  }

  /**
   * What a named plan's grants gain and lose (its capabilities and feature values, by name), with
   * its running subscriptions when it loses one; undefined when they stay. The product holds every
   * capability and feature either plan refers to (an import deletes none). The plan's old grants are
   * read through the product as stored (`stored`): a feature the file changes (an enum made boolean)
   * has lost the options its old values name in the product after the merge (`product`).
   */
  private async grantChange(
    r: Repositories,
    stored: Product,
    product: Product,
    before: Plan,
    after: Plan,
    now: Date,
  ): Promise<GrantChange | undefined> {
    const capName = (p: Product) => (id: Id) => p.capabilities.find((c) => c.id === id)?.name ?? id;
    const had = before.capabilityIds.map(capName(stored));
    const has = after.capabilityIds.map(capName(product));
    const capabilities = { added: has.filter((n) => !had.includes(n)), removed: had.filter((n) => !has.includes(n)) };
    const was = new Map(planFeatureValues(stored, before));
    const is = new Map(planFeatureValues(product, after));
    const features: GrantChange['features'] = {};
    for (const k of new Set([...was.keys(), ...is.keys()]))
      if (was.get(k) !== is.get(k)) features[k] = { before: was.get(k) ?? null, after: is.get(k) ?? null };
    if (!capabilities.added.length && !capabilities.removed.length && !Object.keys(features).length) return undefined;
    const runningSubscriptions = (await r.subscriptions.listByPlan(before.id)).filter((x) => effectiveStatus(x, now) !== 'CANCELED').length;
    return { capabilities, features, runningSubscriptions };
  }

  /**
   * The catalog view of the file's prices: one recurring line item with one price and a currency
   * option per currency (minor units), reusing the ids a previous import gave them so that an
   * unchanged file stays unchanged.
   */
  /**
   * The metered line items of a plan's `usage` entries: each counts on the tenant's meter of its
   * slug (created when new) with its terms, priced per unit or by tiers per currency; ids of the
   * item of the previous run on the same meter are kept, so an unchanged file stays unchanged.
   */
  private async usageLineItems(
    r: Repositories,
    tenant: Tenant,
    where: string,
    entries: UsageEntry[],
    previous: LineItem[],
    currencies: Map<string, Currency>,
    plan: Plan,
    now: Date,
  ): Promise<LineItem[]> {
    const out: LineItem[] = [];
    for (const [i, u] of entries.entries()) {
      const at = `${where}[${i}]`;
      if (typeof u.meter !== 'string' || !METER_SLUG.test(u.meter) || u.meter.length > 64)
        invalid(`${at}.meter`, 'must match ^[a-z0-9_]+$');
      if (out.some((li) => li.meter?.slug === u.meter)) invalid(`${at}.meter`, 'is named twice');
      const found = await r.usage.findMeter(tenant, u.meter);
      if (u.scale !== undefined && (!Number.isInteger(u.scale) || u.scale < 0 || u.scale > MAX_SCALE))
        invalid(`${at}.scale`, `must be a whole number from 0 to ${MAX_SCALE}`);
      if (found && u.scale !== undefined && u.scale !== (found.scale ?? 0))
        invalid(`${at}.scale`, `the meter ${u.meter} counts with ${found.scale ?? 0} decimal places; a meter's scale never changes`);
      // A meter with decimal places takes its terms and tier bounds in them.
      const scale = found?.scale ?? u.scale ?? 0;
      let meter: Meter | undefined = found;
      if (!meter) {
        const id = this.deps.ids.newId();
        const created = {
          id,
          ...tenant,
          slug: u.meter,
          name: u.name ?? u.meter,
          unitLabel: u.unitLabel ?? null,
          ...(scale ? { scale } : {}),
          paymentMeterId: `mtr_${id.replace(/-/g, '').slice(0, 16)}`,
          createdAt: now,
          updatedAt: now,
        };
        await r.usage.saveMeter(created);
        meter = created;
      }
      const { id: meterId, slug, name: meterName, paymentMeterId, createdAt, updatedAt } = meter;
      const old = previous.find((li) => li.priceType === 'metered' && li.meter?.slug === u.meter && li.usage);
      const oldPrice = old?.prices[0];
      const draftTerms = {
        priceType: 'metered' as const,
        name: u.name ?? meterName,
        allowance: u.allowance,
        maxUsage: u.maxUsage,
        minUsage: u.minUsage,
        rollover: u.rollover,
      };
      const terms = usageTermsOf(draftTerms, undefined, at, scale) ?? {
        allowance: 0n,
        maxUsage: null,
        minUsage: 0n,
        rollover: { kind: 'none' as const },
      };
      const tiered = u.tiers !== undefined;
      const names = Object.keys(tiered ? (u.tiers ?? {}) : (u.unitPrices ?? {}));
      const declared = new Set(plan.currencies.map((c) => [...currencies.values()].find((x) => x.id === c.currencyId)?.shortName));
      for (const n of names)
        if (!declared.has(n.toUpperCase())) invalid(`${at}.${tiered ? 'tiers' : 'unitPrices'}.${n}`, "is not one of the plan's currencies");
      // Major units to minor ones on the decimal text (never a binary multiply), exact: at most
      // 12 places below the minor unit (the catalog API's limit, Stripe's unit_amount_decimal) and
      // 15 significant digits, else refused rather than rounded.
      const minor = (major: number, currency: string, field: string) => {
        if (typeof major !== 'number' || !Number.isFinite(major) || !(major >= 0)) invalid(field, 'must be a number of at least 0');
        const exponent = currencyExponent(currency);
        if (exactDecimal(major).places > AMOUNT_PLACES + exponent)
          invalid(field, `must have at most ${AMOUNT_PLACES + exponent} decimal places (${AMOUNT_PLACES} below the minor unit)`);
        if (significantDigits(major) > AMOUNT_SIGNIFICANT_DIGITS)
          invalid(field, `must have at most ${AMOUNT_SIGNIFICANT_DIGITS} significant digits`);
        const amount = shiftDecimal(major, exponent);
        if (amount > MAX_AMOUNT_MINOR) invalid(field, `must be at most ${shiftDecimal(MAX_AMOUNT_MINOR, -exponent)}`);
        return amount;
      };
      const id = old?.id ?? this.deps.ids.newId();
      const priceId = oldPrice?.id ?? this.deps.ids.newId();
      out.push({
        id,
        name: u.name ?? meterName,
        slug: u.meter,
        paymentProductId: old?.paymentProductId ?? `prod_${id.replace(/-/g, '').slice(0, 14)}`,
        nickname: u.name ?? meterName,
        priceType: 'metered',
        intervalType: 'recurring',
        billingScheme: tiered ? 'tiered' : 'per_unit',
        tiersMode: tiered ? (u.tiersMode ?? 'graduated') : null,
        minQuantity: 1,
        maxQuantity: 1,
        isActive: true,
        allowChangingQuantity: false,
        unitLabel: u.unitLabel ?? null,
        meter: { id: meterId, slug, name: meterName, paymentMeterId, ...(scale ? { scale } : {}), createdAt, updatedAt },
        usage: terms,
        prices: [
          {
            id: priceId,
            paymentPriceId: oldPrice?.paymentPriceId ?? `price_${priceId.replace(/-/g, '').slice(0, 14)}`,
            interval: plan.interval,
            intervalCount: plan.length,
            currencyOptions: names.map((n, k) => {
              const currency = n.toLowerCase();
              const was = oldPrice?.currencyOptions.find((o) => o.currency === currency);
              const tiers = tiered ? (u.tiers?.[n] ?? []) : [];
              if (tiered && tiers.length === 0) invalid(`${at}.tiers.${n}`, 'needs at least one tier');
              // Each bound as its text and its steps of the meter (null: inf).
              const bounds = tiers.map((t, j): [string, bigint | null] => {
                const field = `${at}.tiers.${n}[${j}].upTo`;
                if (t.upTo === 'inf') return ['inf', null];
                if (!scale)
                  return Number.isSafeInteger(t.upTo) && t.upTo > 0
                    ? [String(t.upTo), BigInt(t.upTo)]
                    : invalid(field, 'must be a whole number of units or inf');
                // A decimal meter's bound, in its units: kept as the exact decimal text.
                const steps = termSteps(t.upTo, field, scale) || invalid(field, `must be greater than 0`);
                return [formatUnits(steps, scale), steps];
              });
              assertTierBounds(
                bounds.map((b) => b[1]),
                (j) => `${at}.tiers.${n}[${j}].upTo`,
                (j) => bounds[j][0],
              );
              return {
                id: was?.id ?? this.deps.ids.newId(),
                currency,
                unitAmount: tiered ? null : minor(u.unitPrices?.[n] as number, n, `${at}.unitPrices.${n}`),
                isDefault: k === 0,
                tiers: tiers.map((t, j) => ({
                  id: was?.tiers[j]?.id ?? this.deps.ids.newId(),
                  upTo: bounds[j][0],
                  unitAmount: minor(t.unitAmount, n, `${at}.tiers.${n}[${j}].unitAmount`),
                  flatAmount:
                    t.flatAmount === undefined || t.flatAmount === null
                      ? null
                      : minor(t.flatAmount, n, `${at}.tiers.${n}[${j}].flatAmount`),
                  createdAt: was?.tiers[j]?.createdAt ?? now,
                  updatedAt: now,
                })),
                createdAt: was?.createdAt ?? now,
                updatedAt: now,
              };
            }),
            archivedAt: null,
            createdAt: oldPrice?.createdAt ?? now,
            updatedAt: now,
          },
        ],
        archivedAt: null,
        createdAt: old?.createdAt ?? now,
        updatedAt: now,
      });
    }
    return out;
  }

  private lineItemsOf(plan: Plan, previous: LineItem[], currencies: Map<string, Currency>, now: Date, withUsage = false): LineItem[] {
    if (plan.currencies.length === 0) return [];
    const byId = new Map([...currencies.values()].map((c) => [c.id, c]));
    const oldItem = previous[0];
    const oldPrice = oldItem?.prices[0];
    const perSeat = plan.licenseType === 'perSeat';
    const id = oldItem?.id ?? this.deps.ids.newId();
    const priceId = oldPrice?.id ?? this.deps.ids.newId();
    const stamp = <T extends { createdAt: Date; updatedAt: Date }>(old: T | undefined) => ({
      createdAt: old?.createdAt ?? now,
      updatedAt: old?.updatedAt ?? now,
    });
    return [
      {
        id,
        name: plan.displayName,
        slug: plan.key ?? id,
        paymentProductId: oldItem?.paymentProductId ?? `prod_${id.replace(/-/g, '').slice(0, 14)}`,
        nickname: plan.displayName,
        // A plan with usage entries prices its usage on their line items; this one is its base price.
        priceType: plan.usageBased && !withUsage ? 'metered' : perSeat ? 'per_seat' : 'flat_rate',
        intervalType: 'recurring',
        billingScheme: perSeat || (plan.usageBased && !withUsage) ? 'per_unit' : 'flat_rate',
        tiersMode: null,
        minQuantity: perSeat ? Math.max(1, plan.perSeatAmount) : 1,
        maxQuantity: perSeat ? 10_000 : 1,
        isActive: true,
        allowChangingQuantity: perSeat,
        unitLabel: perSeat ? 'seat' : null,
        meter:
          plan.usageBased && !withUsage
            ? (oldItem?.meter ?? {
                id: this.deps.ids.newId(),
                slug: `${plan.key ?? id}-usage`,
                name: `${plan.displayName} usage`,
                paymentMeterId: `mtr_${id.slice(0, 8)}`,
                createdAt: now,
                updatedAt: now,
              })
            : null,
        prices: [
          {
            id: priceId,
            paymentPriceId: oldPrice?.paymentPriceId ?? `price_${priceId.replace(/-/g, '').slice(0, 14)}`,
            interval: plan.interval,
            intervalCount: plan.length,
            currencyOptions: plan.currencies.map((pc, i) => {
              const currency = (byId.get(pc.currencyId) as Currency).shortName.toLowerCase();
              const old = oldPrice?.currencyOptions.find((o) => o.currency === currency);
              return {
                id: old?.id ?? this.deps.ids.newId(),
                currency,
                unitAmount: pc.amountMinor,
                isDefault: i === 0,
                tiers: [],
                ...stamp(old),
              };
            }),
            archivedAt: null,
            ...stamp(oldPrice),
          },
        ],
        archivedAt: null,
        ...stamp(oldItem),
      },
    ];
  }
}

/** The short name (`USD`) of the currency of this id, among the import's currencies. */
function shortNameOf(currencies: Map<string, Currency>, id: Id): string | undefined {
  for (const c of currencies.values()) if (c.id === id) return c.shortName.toUpperCase();
  return undefined;
}

/** A plan's feature values as the file writes them: feature key to `"true"`, a number, `unlimited` or an enum option. */
function planFeatureValues(product: Product, plan: Plan): [string, string][] {
  return plan.features.map((v) => {
    const f = product.features.find((x) => x.id === v.featureId);
    const value = v.isUnlimited
      ? 'unlimited'
      : v.enumOptionId
        ? (f?.enumOptions.find((o) => o.id === v.enumOptionId)?.name ?? '')
        : v.value;
    return [f?.key ?? f?.name ?? v.featureId, value];
  });
}

/** Why a file may not change an archived product or what belongs to it. */
const archivedProductMessage = (key: string) =>
  `product ${key} is archived: it, its plans and pricing tables are read-only (un-archive it first: PUT /api/products/:id {"isActive": true})`;

/** A metered line item with terms as the catalog file's usage entry (what import reads back). */
function usageEntryOf(li: LineItem, plan: Plan): UsageEntry {
  const t = li.usage as NonNullable<LineItem['usage']>;
  const scale = li.meter?.scale ?? 0;
  const options = li.prices[0]?.currencyOptions ?? [];
  // Minor units back to major ones on the decimal text: exactly what import reads back.
  const major = (minor: number | null, currency: string) => shiftDecimal(minor ?? 0, -currencyExponent(currency));
  void plan;
  return {
    meter: li.meter?.slug ?? li.slug,
    ...(scale ? { scale } : {}),
    name: li.name,
    unitLabel: li.unitLabel,
    // In the meter's units (a decimal meter's terms are kept in its smallest step).
    allowance: exactNumber(t.allowance, scale),
    maxUsage: t.maxUsage === null ? null : exactNumber(t.maxUsage, scale),
    minUsage: exactNumber(t.minUsage, scale),
    rollover: t.rollover.kind === 'upTo' ? { upTo: exactNumber(t.rollover.units, scale) } : t.rollover.kind,
    ...(li.billingScheme === 'tiered'
      ? {
          tiersMode: li.tiersMode ?? 'graduated',
          tiers: Object.fromEntries(
            options.map((o) => [
              o.currency.toUpperCase(),
              o.tiers.map((x) => ({
                upTo: x.upTo === 'inf' ? ('inf' as const) : Number(x.upTo),
                unitAmount: major(x.unitAmount, o.currency),
                flatAmount: x.flatAmount === null ? null : major(x.flatAmount, o.currency),
              })),
            ]),
          ),
        }
      : { unitPrices: Object.fromEntries(options.map((o) => [o.currency.toUpperCase(), major(o.unitAmount, o.currency)])) }),
  };
}

/** Writes an organisation's catalog back in the catalog-file shape (what `import` reads). */
export class CatalogFileExport {
  constructor(private readonly deps: Pick<CoreDeps, 'uow'>) {}

  /** One product of the tenant as a catalog file (the organisation's file with just that product). */
  async exportProduct(tenant: Tenant, productId: Id): Promise<CatalogFile> {
    const { org, product } = await this.deps.uow.read(async (r) => ({
      product: assertAccessible(await r.products.get(productId), tenant, 'product'),
      org: (await r.organisations.get(tenant.organisationId)) as { name: string },
    }));
    const file = await this.export(org.name, tenant.isTest);
    return { ...file, products: (file.products ?? []).filter((p) => p.key === (product.key ?? product.id)) };
  }

  async export(organisation: string, test = false): Promise<CatalogFile> {
    return this.deps.uow.run(async (r) => {
      const org =
        (await r.organisations.findByName(organisation)) ??
        fail(ErrorCodes.ORGANISATION_NOT_FOUND, `no organisation named ${organisation}`);
      const tenant: Tenant = { organisationId: org.id, isTest: test };
      const currencies = new Map((await r.currencies.list()).map((c) => [c.id, c]));
      const products: ProductEntry[] = [];
      for (const p of await r.products.list(tenant)) {
        const plans = (await r.plans.listByProduct(p.id)).filter((x) => !x.archivedAt);
        const tables = await r.pricingTables.listByProduct(p.id);
        const planKey = (plan: Plan) => plan.key ?? plan.id;
        const capName = new Map(p.capabilities.map((c) => [c.id, c.name]));
        const features = [...p.features].sort((a, b) => a.sortOrder - b.sortOrder);
        products.push({
          key: p.key ?? p.id,
          name: p.name,
          displayName: p.displayName,
          description: p.description,
          currencies: p.currencies.map((c) => currencies.get(c.currencyId)?.shortName).filter((c): c is string => !!c),
          capabilities: p.capabilities.map((c) => c.name),
          features: features.map((f) => ({
            key: f.key ?? f.name,
            displayName: f.displayName,
            description: f.description,
            valueType: f.valueType,
            defaultValue: f.defaultValue,
            showUnlimited: f.showUnlimited,
            visibility: f.visibility,
            ...(f.valueType === 'enum' ? { enumOptions: f.enumOptions.map((o) => o.name) } : {}),
          })),
          plans: plans.map((plan) => ({
            key: planKey(plan),
            displayName: plan.displayName,
            description: plan.description,
            pricingType: plan.pricingType,
            licenseType: plan.licenseType,
            perSeatAmount: plan.perSeatAmount,
            interval: plan.interval,
            length: plan.length,
            evaluation: plan.evaluation,
            evalDays: plan.evalDays,
            trialDays: plan.trialDays,
            usageBased: plan.usageBased,
            ...(plan.lineItems.some((li) => li.usage)
              ? { usage: plan.lineItems.filter((li) => li.usage).map((li) => usageEntryOf(li, plan)) }
              : {}),
            visibility: plan.visibility,
            active: plan.active,
            prices: Object.fromEntries(
              plan.currencies.map((c) => {
                const cur = currencies.get(c.currencyId) as Currency;
                return [cur.shortName, toMajor(c.amountMinor, cur.shortName)];
              }),
            ),
            capabilities: plan.capabilityIds.map((id) => capName.get(id)).filter((n): n is string => !!n),
            features: Object.fromEntries(planFeatureValues(p, plan)),
          })),
          pricingTables: tables.map((t) => ({
            key: t.key ?? t.id,
            name: t.name,
            title: t.title,
            text: t.text,
            theme: t.theme,
            plans: [...t.plans]
              .sort((a, b) => a.sortOrder - b.sortOrder)
              .map((x) => plans.find((pl) => pl.id === x.planId))
              .filter((x): x is Plan => !!x)
              .map(planKey),
            ...(t.featuredPlanId ? { featuredPlan: planKey(plans.find((pl) => pl.id === t.featuredPlanId) as Plan) } : {}),
            features: [...t.features]
              .sort((a, b) => a.sortOrder - b.sortOrder)
              .map((x) => p.features.find((f) => f.id === x.featureId)?.key)
              .filter((k): k is string => !!k),
          })),
        });
      }
      return { organisation, test, products };
    });
  }
}
