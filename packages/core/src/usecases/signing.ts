import type { Id, SigningKey, Tenant } from '../model';
import { Lru } from '../support/lru';
import type { Clock, IdGenerator, KeyCipher, SignatureEncoding, SignatureScheme, SignedMessage, Signer, UnitOfWork } from '../ports';

interface LiveKey {
  record: SigningKey;
  key: unknown;
  /** The scheme's `publicHash` of the record, made once (HMAC's is a SHA-256). */
  publicHash: string;
}

export interface SigningDeps {
  uow: UnitOfWork;
  clock: Clock;
  ids: IdGenerator;
  scheme: SignatureScheme;
  cipher: KeyCipher;
}

/** What a client needs to verify a tenant's signed answers offline. */
export interface PublicSigningKey {
  id: Id;
  organisationId: Id;
  publicKeyPem: string | null;
  createdAt: Date;
}

/** The cache's key of a tenant: one signing key per organisation and mode. */
const modeKey = (organisationId: Id, isTest: boolean): string => `${organisationId}|${isTest ? 'test' : 'live'}`;

/**
 * The organisations' signing keys, one per organisation AND mode: a test-mode request is signed
 * with the organisation's test key, a live one with its live key, so that nothing a test-mode API
 * key (shared with CI and developers) makes verifies against the live public key. Created on first
 * use, stored encrypted, rotated without downtime (older keys stay active, and listed, until
 * retired), and kept decrypted in memory.
 */
export class SigningKeys implements Signer {
  /**
   * Decrypted current keys by organisation and mode, kept while the change feed is heard (a
   * rotation anywhere evicts both modes of its organisation: the feed names only the organisation).
   */
  private readonly cache = new Lru<string, LiveKey>(10_000);
  /** Signatures already made: the same capability string under the same key is signed once. */
  private readonly signatures = new Lru<string, string>(50_000);
  private live = false;
  /**
   * Counts forgets and trust changes. A load that raced one (a rotation heard while it read the
   * database) may carry the key that rotation replaced, so it is read again, and a read that raced
   * one is never kept: as the entitlement and API-key caches do.
   */
  private epoch = 0;
  /**
   * Loads of a current key under way, by organisation and mode: the concurrent first requests of
   * one instance wait for one load (and so one creation) instead of each making a transaction of
   * its own. A forget drops its organisation's (both modes), a trust change all of them, so a load
   * begun before either is not joined; a forget of another organisation leaves this one's joinable
   * (a burst of first uses across organisations, each of whose new keys the change feed reports
   * back, still shares one load per organisation and mode). A load ended, failed included, leaves.
   */
  private readonly loading = new Map<string, Promise<LiveKey>>();

  constructor(private readonly deps: SigningDeps) {}

  async sign(
    tenant: Tenant,
    message: string,
    options: { encoding?: SignatureEncoding; fromMemory?: boolean } = {},
  ): Promise<SignedMessage> {
    this.notJoined();
    const held = options.fromMemory ? this.cache.peek(modeKey(tenant.organisationId, tenant.isTest)) : undefined;
    const current = held ?? (await this.loadCurrent(tenant));
    return this.signWith(current, message, options.encoding ?? 'der');
  }

  signHeld(tenant: Tenant, message: string, encoding: SignatureEncoding = 'der'): SignedMessage | undefined {
    const current = this.live ? this.cache.get(modeKey(tenant.organisationId, tenant.isTest)) : undefined;
    return current && this.signWith(current, message, encoding);
  }

  private signWith(current: LiveKey, message: string, encoding: SignatureEncoding): SignedMessage {
    // By key id: a test key and a live key never share a memoised signature.
    const memo = `${current.record.id}|${encoding}|${message}`;
    let signature = this.signatures.get(memo);
    if (signature === undefined) {
      signature = this.deps.scheme.sign(current.key, message, encoding);
      this.signatures.set(memo, signature);
    }
    return { signature, publicHash: current.publicHash };
  }

  /** The current key of the tenant's organisation and mode (created when it has none). */
  async current(tenant: Tenant): Promise<SigningKey> {
    return (await this.loadCurrent(tenant)).record;
  }

  /** A new key that signs the tenant's mode from now on; older keys stay active until retired. The other mode's key is untouched. */
  async rotate(tenant: Tenant): Promise<SigningKey> {
    this.notJoined();
    const record = await this.deps.uow.run(async (r) => {
      // Every writer of an organisation's keys takes turns on its row (see `readCurrent`).
      await r.organisations.getForUpdate(tenant.organisationId);
      // The new key must sort first ("newest") even within the millisecond of the one it replaces.
      const [newest] = await r.signingKeys.listActive(tenant, this.deps.scheme.algorithm);
      const after = newest ? new Date(newest.createdAt.getTime() + 1) : undefined;
      return this.create(tenant, (k) => r.signingKeys.save(k), after);
    });
    this.forget(tenant.organisationId);
    return record;
  }

  /** Every active key of the tenant's organisation and mode, newest (the current one) first. */
  async active(tenant: Tenant): Promise<SigningKey[]> {
    return this.deps.uow.run((r) => r.signingKeys.listActive(tenant, this.deps.scheme.algorithm));
  }

  /** The decrypted secret of a key (an HMAC secret is shown to the vendor by the CLI). */
  reveal(record: SigningKey): Buffer {
    return this.deps.cipher.open(record.secretCiphertext);
  }

  /**
   * What a client needs to verify the tenant's checks offline: the current key of the tenant's
   * mode, its id and its public half as PEM (null with HMAC, whose checks only the service can verify).
   */
  async publicKey(tenant: Tenant): Promise<PublicSigningKey> {
    const record = await this.current(tenant);
    return { id: record.id, organisationId: record.organisationId, publicKeyPem: this.publicKeyPem(record), createdAt: record.createdAt };
  }

  /** The key's public half as PEM, or null for HMAC. */
  publicKeyPem(record: SigningKey): string | null {
    return this.deps.scheme.publicKeyPem(record);
  }

  heldKey(tenant: Tenant): object | undefined {
    return this.live ? this.cache.peek(modeKey(tenant.organisationId, tenant.isTest)) : undefined;
  }

  /** Drops the cached keys of an organisation, both modes (its keys changed; the change feed names no mode). */
  forget(organisationId: Id): void {
    this.epoch++;
    for (const isTest of [false, true]) {
      this.cache.delete(modeKey(organisationId, isTest));
      this.loading.delete(modeKey(organisationId, isTest));
    }
  }

  /**
   * Whether the cache may be trusted (the change feed is heard). Trusted again, it starts empty;
   * distrusted, its keys stay for signing from memory during a database outage only.
   */
  setLive(live: boolean): void {
    if (live) this.cache.clear();
    this.loading.clear();
    this.epoch++;
    this.live = live;
  }

  private async loadCurrent(tenant: Tenant): Promise<LiveKey> {
    this.notJoined();
    const key = modeKey(tenant.organisationId, tenant.isTest);
    const cached = this.live ? this.cache.get(key) : undefined;
    if (cached) return cached;
    const flying = this.loading.get(key);
    if (flying) return flying;
    const load = this.load(tenant, key).finally(() => {
      if (this.loading.get(key) === load) this.loading.delete(key);
    });
    this.loading.set(key, load);
    return load;
  }

  /**
   * Never inside an idempotent request's transaction (JoinedUnitOfWork), as the capability check
   * refuses it: a key read or made there is uncommitted (kept or shared, it may be rolled back), and
   * the organisation's row lock that first use (and rotation) takes would come after that request's
   * own locks and be held until it commits: other first uses would wait for the whole request, and
   * one that wrote an API key before signing would lock key then organisation, the reverse of
   * `ApiKeys.revokeFor` (organisation, then key): a deadlock. Nothing signs inside one: the signing
   * routes are GETs (never idempotent), the capability check refuses first, the CLI runs none.
   */
  private notJoined(): void {
    if (this.deps.uow.joined?.())
      throw new Error("a signing key cannot be used inside an idempotent request's transaction: sign before or after it");
  }

  /** The current key from the database, kept in the cache when nothing raced the read. */
  private async load(tenant: Tenant, key: string): Promise<LiveKey> {
    let mark = this.epoch;
    let current = await this.readCurrent(tenant);
    if (mark !== this.epoch) {
      // The read raced a forget or a trust change, so it may hold the key a rotation replaced: read
      // once more. (An organisation's first use races its own key's creation, which the change
      // feed reports back: the second read finds that key and keeps it.)
      mark = this.epoch;
      current = await this.readCurrent(tenant);
    }
    // Kept only when nothing raced the read that gave it; otherwise used once.
    if (this.live && mark === this.epoch) this.cache.set(key, current);
    return current;
  }

  /**
   * The tenant's newest active key from the database (created when it has none), decrypted. On
   * first use several instances (or requests) find none at once: each would make a key of its own,
   * and answers signed with all but the newest would verify with no key the routes serve. So the
   * maker takes the organisation's row lock (which lets inserts of its records go on) and looks
   * again: one makes the key, the others wait for its commit and find it (READ COMMITTED: the
   * second look is a new statement).
   */
  private async readCurrent(tenant: Tenant): Promise<LiveKey> {
    const algorithm = this.deps.scheme.algorithm;
    const record = await this.deps.uow.run(async (r) => {
      const [newest] = await r.signingKeys.listActive(tenant, algorithm);
      if (newest) return newest;
      await r.organisations.getForUpdate(tenant.organisationId);
      const [madeMeanwhile] = await r.signingKeys.listActive(tenant, algorithm);
      return madeMeanwhile ?? this.create(tenant, (k) => r.signingKeys.save(k));
    });
    return { record, key: this.deps.scheme.load(this.reveal(record)), publicHash: this.deps.scheme.publicHash(record) };
  }

  private async create(tenant: Tenant, save: (k: SigningKey) => Promise<void>, notBefore?: Date): Promise<SigningKey> {
    const now = this.deps.clock.now();
    const { publicKey, secret } = this.deps.scheme.generate();
    const record: SigningKey = {
      id: this.deps.ids.newId(),
      organisationId: tenant.organisationId,
      isTest: tenant.isTest,
      algorithm: this.deps.scheme.algorithm,
      publicKey,
      secretCiphertext: this.deps.cipher.seal(secret),
      createdAt: notBefore && notBefore > now ? notBefore : now,
      retiredAt: null,
    };
    await save(record);
    return record;
  }
}
