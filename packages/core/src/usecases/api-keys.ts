import * as crypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorCodes, fail, invalid, isDomainError } from '../errors';
import type { ApiKey, Id, Organisation, Page, Scope, ScopeResource, Tenant } from '../model';
import { assertAccessible } from '../domain/tenancy';
import { pageOf } from '../support/pagination';
import { SCOPE_NAMES } from '../model';
import { Lru } from '../support/lru';
import type { Clock, IdGenerator, Randomness, Repositories, UnitOfWork } from '../ports';

declare const digested: unique symbol;

/**
 * A presented API key's SHA-256 (hex): what is stored and looked up, and what the rate limiters
 * count by. A request computes it once (`hashApiKey`) and hands it to every step that needs the
 * key, so the key itself is read once and kept nowhere; the brand keeps a raw key from being
 * passed where a digest is expected.
 */
export type ApiKeyHash = string & { readonly [digested]: true };

/** Node's one-shot digest (20.12 and later): about a third of the time of a Hash object, on every request. */
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

export const hashApiKey = (key: string): ApiKeyHash =>
  (oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key, 'utf8').digest('hex')) as ApiKeyHash;

const KNOWN_SCOPES: ReadonlySet<string> = new Set(SCOPE_NAMES);

/**
 * The rule of a new organisation's name (the `--org` and catalog files' `organisation` that finds
 * it again): not blank, and no blanks around it, refused rather than trimmed (a name kept trimmed
 * would not be found by the untrimmed `--org` that made it). VALIDATION_FAILED naming `property`.
 */
export function assertOrganisationName(name: string, property = 'name'): void {
  if (name.trim() === '') invalid(property, 'must not be blank');
  if (name.trim() !== name) invalid(property, 'must not begin or end with blanks (spaces, tabs or line breaks)');
}

export function parseScopes(raw: string[]): Scope[] {
  const scopes = raw.map((s) => s.trim()).filter(Boolean);
  for (const s of scopes) {
    if (!KNOWN_SCOPES.has(s))
      fail(ErrorCodes.VALIDATION_FAILED, `unknown scope ${s}`, [{ property: 'scopes', error: `unknown scope ${s}` }]);
  }
  return scopes as Scope[];
}

/**
 * A narrower resource whose scope a wider one's holds too: `licenses:read` (or `write`) passes the
 * checks, so keys made before the `checks` scope existed keep checking.
 */
const HELD_BY: Partial<Record<ScopeResource, ScopeResource>> = { checks: 'licenses' };

/** `write` implies `read` on the same resource; `*` allows everything; `licenses` holds `checks`. */
export function hasScope(key: Pick<ApiKey, 'scopes'>, resource: ScopeResource, access: 'read' | 'write'): boolean {
  if (key.scopes.some((s) => s === '*' || s === `${resource}:${access}` || (access === 'read' && s === `${resource}:write`))) return true;
  const wider = HELD_BY[resource];
  return wider !== undefined && hasScope(key, wider, access);
}

/**
 * Whether a key holding `held` may hand out `wanted`: a key never creates a key that can do more
 * than itself (`*` only from `*`; `x:write` from `x:write`; `x:read` from either; `checks:read`
 * from `licenses:read` too, being narrower).
 */
export function canGrant(held: Pick<ApiKey, 'scopes'>, wanted: Scope): boolean {
  if (wanted === '*') return held.scopes.includes('*');
  const [resource, access] = wanted.split(':') as [ScopeResource, 'read' | 'write'];
  return hasScope(held, resource, access);
}

/**
 * What a client library needs (the browser/Node clients of the service the contract describes:
 * pricing tables, products and plans, the capability check): read only, safe to ship to a browser.
 * `checks:read`, not `licenses:read`: a browser checks, it never lists licenses and their purchasers.
 */
export const CLIENT_SCOPES = ['products:read', 'plans:read', 'pricing-tables:read', 'checks:read'] as const;

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  plaintext: string;
  record: ApiKey;
}

export class ApiKeyService {
  /**
   * Authenticated keys by hash (the lookup is on every request of every vendor app), kept while
   * the change feed is heard: a revocation anywhere evicts the key everywhere at once. Three lines
   * keep a revoked key from living on (docs/reliability.md, "Revocation"): a lookup that raced an
   * invalidation is not kept (the epoch, as in the entitlement cache); while the feed cannot be
   * confirmed the cache is bypassed; and `revalidate` asks the database about every cached key at
   * a bounded interval, so even an invalidation lost on a live connection is repaired in time.
   * While the feed is not heard the keys stay in memory, untrusted, for the database-outage grace.
   */
  private readonly cache = new Lru<string, ApiKey>(10_000);
  private live = false;
  private epoch = 0;

  constructor(
    private readonly deps: {
      uow: UnitOfWork;
      clock: Clock;
      ids: IdGenerator;
      random: Randomness;
      /** Whether keys held in memory may stand in while the database does not answer (the outage grace). */
      outageGrace?: () => boolean;
      /** The database answered a lookup (an outage that began before is over). */
      databaseAnswered?: () => void;
    },
  ) {}

  /** Evicts keys named by the change feed; on trust lost the keys stay (untrusted), on trust regained they go. */
  cacheControl(): { invalidate(keyHash: string): void; setLive(live: boolean): void } {
    return {
      invalidate: (keyHash) => {
        this.epoch++;
        this.cache.delete(keyHash);
      },
      setLive: (live) => {
        this.epoch++;
        // Back on the feed, what was kept may have been revoked meanwhile: start empty.
        if (live) this.cache.clear();
        this.live = live;
      },
    };
  }

  /**
   * The second line against a lost invalidation: one query for the revocation state of every
   * cached key; revoked or vanished keys are evicted. Returns how many were evicted.
   */
  async revalidate(): Promise<number> {
    if (this.cache.size === 0) return 0;
    const hashes = [...this.cache.keys()];
    const alive = new Set(await this.deps.uow.read((r) => r.apiKeys.liveAmong(hashes)));
    let evicted = 0;
    for (const h of hashes) {
      if (alive.has(h)) continue;
      this.cache.delete(h);
      evicted++;
    }
    if (evicted) this.epoch++;
    return evicted;
  }

  /** Whether any organisation exists (an empty database has none). */
  async anyOrganisation(): Promise<boolean> {
    return this.deps.uow.read((r) => r.organisations.any());
  }

  /** Every organisation, by name. */
  async organisations(): Promise<Organisation[]> {
    return this.deps.uow.read((r) => r.organisations.list());
  }

  /** The organisation with this name, or ORGANISATION_NOT_FOUND. */
  async organisation(name: string): Promise<Organisation> {
    const org = await this.deps.uow.read((r) => r.organisations.findByName(name));
    return org ?? fail(ErrorCodes.ORGANISATION_NOT_FOUND, `no organisation named ${name}`);
  }

  /**
   * Creates an organisation if it does not exist yet. A new one's name must pass
   * `assertOrganisationName` (VALIDATION_FAILED naming `name`); an existing one is found as named.
   */
  async ensureOrganisation(name: string): Promise<Organisation> {
    return this.deps.uow.run(async (r) => {
      const existing = await r.organisations.findByName(name);
      if (existing) return existing;
      assertOrganisationName(name);
      const org: Organisation = { id: this.deps.ids.newId(), name, createdAt: this.deps.clock.now() };
      await r.organisations.save(org);
      return org;
    });
  }

  /**
   * A new key of the organisation. `createdBy`: the key asking (through the API), read again in the
   * transaction: one revoked since it was authenticated makes none (UNAUTHENTICATED).
   */
  async create(input: { organisation: string; name?: string; scopes: string[]; isTest: boolean; createdBy?: Id }): Promise<CreatedApiKey> {
    const scopes = parseScopes(input.scopes);
    return this.deps.uow.run(async (r) => {
      const org = await r.organisations.findByName(input.organisation);
      if (!org) return fail(ErrorCodes.ORGANISATION_NOT_FOUND, `no organisation named ${input.organisation}`);
      // No scope named (`[]`, or only blanks) is no key: never read as `*` (a full-access key).
      if (scopes.length === 0) invalid('scopes', 'must name at least one scope (* for all)');
      if (input.createdBy !== undefined && (await r.apiKeys.get(input.createdBy))?.revokedAt !== null)
        return fail(ErrorCodes.UNAUTHENTICATED, 'the API key was revoked');
      const secret = this.deps.random.bytes(24).toString('base64url');
      const plaintext = `${input.isTest ? 'test_' : 'live_'}${secret}`;
      const record: ApiKey = {
        id: this.deps.ids.newId(),
        organisationId: org.id,
        name: input.name ?? 'api key',
        keyHash: hashApiKey(plaintext),
        prefix: plaintext.slice(0, 9),
        scopes,
        isTest: input.isTest,
        createdAt: this.deps.clock.now(),
        revokedAt: null,
      };
      await r.apiKeys.save(record);
      return { plaintext, record };
    });
  }

  /**
   * A key of the creator's organisation and mode, made through the API: its scopes (default: the
   * creator's) must each be within the creator's own (VALIDATION_FAILED naming `scopes` if not).
   */
  async createFor(tenant: Tenant, creator: ApiKey, input: { name?: string; scopes?: string[] }): Promise<CreatedApiKey> {
    // Absent: the creator's own scopes; an empty list is no scope at all, not "everything I hold".
    if (input.scopes !== undefined && input.scopes.length === 0)
      invalid('scopes', "must name at least one scope (leave it out for the caller's own)");
    const scopes = input.scopes ? parseScopes(input.scopes) : creator.scopes;
    for (const s of scopes)
      if (!canGrant(creator, s))
        fail(ErrorCodes.FORBIDDEN, `this API key cannot grant ${s}`, [{ property: 'scopes', error: `cannot grant ${s}` }]);
    const org = await this.deps.uow.read((r) => r.organisations.get(tenant.organisationId));
    if (!org) return fail(ErrorCodes.ORGANISATION_NOT_FOUND, 'no such organisation');
    return this.create({ organisation: org.name, name: input.name, scopes, isTest: tenant.isTest, createdBy: creator.id });
  }

  /** A page of the tenant's keys that are not revoked, oldest first. */
  async page(tenant: Tenant, query: { limit: number; after?: string; before?: string }): Promise<Page<ApiKey>> {
    const keys = await this.deps.uow.read((r) => r.apiKeys.listByOrganisation(tenant.organisationId));
    return pageOf(
      keys.filter((k) => k.isTest === tenant.isTest && !k.revokedAt),
      query,
    );
  }

  /** One of the tenant's keys (a revoked key is gone). */
  async getFor(tenant: Tenant, id: Id): Promise<ApiKey> {
    const key = await this.deps.uow.read((r) => r.apiKeys.get(id));
    return assertAccessible(key?.revokedAt ? undefined : key, tenant, 'API key');
  }

  /**
   * Revokes one of the tenant's keys: every instance stops accepting it (the change feed, as for the
   * CLI's revocation). Only a key that could have granted every scope of the target may revoke it
   * (FORBIDDEN naming the key if not): an `api-keys:write` key cannot take the `*` key away. The
   * organisation's last `*` key of the mode is kept (CONFLICT naming it): without one, nobody could
   * make or revoke its keys through the API any more, only the operator's `tollgate keys create`.
   * One transaction under the organisation's row lock, so two revocations take turns: each sees the
   * other's (two `*` keys revoking each other, or themselves, at once on two instances leave one),
   * and a revoker revoked since its request was authenticated revokes nothing (UNAUTHENTICATED).
   */
  async revokeFor(tenant: Tenant, revoker: Pick<ApiKey, 'id' | 'scopes'>, id: Id): Promise<ApiKey> {
    return this.deps.uow.run(async (r) => {
      await r.organisations.getForUpdate(tenant.organisationId);
      if ((await r.apiKeys.get(revoker.id))?.revokedAt !== null) return fail(ErrorCodes.UNAUTHENTICATED, 'the API key was revoked');
      const found = await r.apiKeys.get(id);
      const target = assertAccessible(found?.revokedAt ? undefined : found, tenant, 'API key');
      const beyond = target.scopes.find((s) => !canGrant(revoker, s));
      if (beyond !== undefined)
        fail(
          ErrorCodes.FORBIDDEN,
          `this API key cannot revoke API key ${target.id} (${target.name}): it holds ${beyond}, which this key cannot grant`,
          [{ property: 'id', error: `API key ${target.id} holds ${beyond}` }],
        );
      if (target.scopes.includes('*')) {
        const keys = await r.apiKeys.listByOrganisation(tenant.organisationId);
        if (!keys.some((k) => k.id !== target.id && k.isTest === target.isTest && !k.revokedAt && k.scopes.includes('*')))
          fail(
            ErrorCodes.CONFLICT,
            `API key ${target.id} (${target.name}) is the organisation's last key holding * in ${target.isTest ? 'test' : 'live'} mode: create another * key first`,
            [{ property: 'id', error: `API key ${target.id} is the last * key` }],
          );
      }
      return this.revokeIn(r, target);
    });
  }

  /**
   * Revokes any key by id, whatever it holds (the operator's `tollgate keys revoke`), under its
   * organisation's row lock, so a revocation through the API at the same time sees it.
   */
  async revoke(id: Id): Promise<ApiKey> {
    return this.deps.uow.run(async (r) => {
      const found = await r.apiKeys.get(id);
      if (!found) return fail(ErrorCodes.NOT_FOUND, 'api key not found');
      await r.organisations.getForUpdate(found.organisationId);
      const key = (await r.apiKeys.get(id)) as ApiKey;
      return this.revokeIn(r, key);
    });
  }

  /** Marks the key revoked in the transaction and forgets it here (the change feed tells the rest). */
  private async revokeIn(r: Repositories, key: ApiKey): Promise<ApiKey> {
    this.epoch++;
    this.cache.delete(key.keyHash);
    if (key.revokedAt) return key;
    const revoked = { ...key, revokedAt: this.deps.clock.now() };
    await r.apiKeys.save(revoked);
    return revoked;
  }

  async list(organisation: string): Promise<ApiKey[]> {
    return this.deps.uow.run(async (r) => {
      const org = await r.organisations.findByName(organisation);
      if (!org) return fail(ErrorCodes.ORGANISATION_NOT_FOUND, `no organisation named ${organisation}`);
      return r.apiKeys.listByOrganisation(org.id);
    });
  }

  /** The live key presented, or UNAUTHENTICATED for a missing, unknown or revoked key. */
  async authenticate(plaintext: string | undefined): Promise<ApiKey> {
    if (!plaintext) return fail(ErrorCodes.UNAUTHENTICATED, 'an API key is required');
    return this.authenticateHash(hashApiKey(plaintext));
  }

  /**
   * The key `authenticateHash` would answer without asking the database: one authenticated here
   * while the change feed is heard (so not revoked anywhere since), else undefined. Lets a handler
   * answer from memory without waiting a turn.
   */
  heldKey(hash: ApiKeyHash): ApiKey | undefined {
    return this.live ? this.cache.get(hash) : undefined;
  }

  /**
   * `authenticate` for a key already digested by `hashApiKey` (a handler that also rate-limits by
   * the digest computes it once per request).
   */
  async authenticateHash(hash: ApiKeyHash): Promise<ApiKey> {
    const cached = this.heldKey(hash);
    if (cached) return cached;
    const mark = this.epoch;
    let key: ApiKey | undefined;
    try {
      key = await this.deps.uow.read((r) => r.apiKeys.findByHash(hash));
    } catch (e) {
      // The database does not answer: within the outage grace a key this instance authenticated
      // before still stands (nothing can be revoked while nothing commits); otherwise the outage error.
      const held =
        isDomainError(e) && e.code === ErrorCodes.DATABASE_UNAVAILABLE && this.deps.outageGrace?.() ? this.cache.peek(hash) : undefined;
      if (held) return held;
      throw e;
    }
    this.deps.databaseAnswered?.();
    // The lookup is by hash; comparing the hashes again in constant time keeps timing flat.
    const stored = Buffer.from(key?.keyHash ?? '0'.repeat(64), 'hex');
    const given = Buffer.from(hash, 'hex');
    if (!key || !timingSafeEqual(stored, given) || key.revokedAt) {
      // Held while untrusted (the feed lost), it must not stand in for a later outage.
      this.cache.delete(hash);
      return fail(ErrorCodes.UNAUTHENTICATED, 'the API key is unknown or revoked');
    }
    // A revocation heard while the lookup ran may be about this very key: do not keep it.
    if (this.live && mark === this.epoch) this.cache.set(hash, key);
    return key;
  }
}
