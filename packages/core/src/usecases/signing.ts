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

/**
 * The organisations' signing keys: created on first use, stored encrypted, rotated without
 * downtime (older keys stay active, and listed, until retired), and kept decrypted in memory.
 */
export interface PublicSigningKey {
  id: Id;
  organisationId: Id;
  publicKeyPem: string | null;
  createdAt: Date;
}

export class SigningKeys implements Signer {
  /** Decrypted current keys by organisation, kept while the change feed is heard (a rotation anywhere evicts). */
  private readonly cache = new Lru<Id, LiveKey>(10_000);
  /** Signatures already made: the same capability string under the same key is signed once. */
  private readonly signatures = new Lru<string, string>(50_000);
  private live = false;
  /**
   * Counts forgets and trust changes. A load that raced one (a rotation heard while it read the
   * database) may carry the key that rotation replaced, so it is read again, and a read that raced
   * one is never kept: as the entitlement and API-key caches do.
   */
  private epoch = 0;

  constructor(private readonly deps: SigningDeps) {}

  async sign(
    organisationId: Id,
    message: string,
    options: { encoding?: SignatureEncoding; fromMemory?: boolean } = {},
  ): Promise<SignedMessage> {
    const held = options.fromMemory ? this.cache.peek(organisationId) : undefined;
    const current = held ?? (await this.loadCurrent(organisationId));
    return this.signWith(current, message, options.encoding ?? 'der');
  }

  signHeld(organisationId: Id, message: string, encoding: SignatureEncoding = 'der'): SignedMessage | undefined {
    const current = this.live ? this.cache.get(organisationId) : undefined;
    return current && this.signWith(current, message, encoding);
  }

  private signWith(current: LiveKey, message: string, encoding: SignatureEncoding): SignedMessage {
    const memo = `${current.record.id}|${encoding}|${message}`;
    let signature = this.signatures.get(memo);
    if (signature === undefined) {
      signature = this.deps.scheme.sign(current.key, message, encoding);
      this.signatures.set(memo, signature);
    }
    return { signature, publicHash: current.publicHash };
  }

  /** The organisation's current key (created when it has none). */
  async current(organisationId: Id): Promise<SigningKey> {
    return (await this.loadCurrent(organisationId)).record;
  }

  /** A new key that signs from now on; older keys stay active until retired. */
  async rotate(organisationId: Id): Promise<SigningKey> {
    const record = await this.deps.uow.run(async (r) => {
      // The new key must sort first ("newest") even within the millisecond of the one it replaces.
      const [newest] = await r.signingKeys.listActive(organisationId, this.deps.scheme.algorithm);
      const after = newest ? new Date(newest.createdAt.getTime() + 1) : undefined;
      return this.create(organisationId, (k) => r.signingKeys.save(k), after);
    });
    this.forget(organisationId);
    return record;
  }

  /** Every active key of the organisation, newest (the current one) first. */
  async active(organisationId: Id): Promise<SigningKey[]> {
    return this.deps.uow.run((r) => r.signingKeys.listActive(organisationId, this.deps.scheme.algorithm));
  }

  /** The decrypted secret of a key (an HMAC secret is shown to the vendor by the CLI). */
  reveal(record: SigningKey): Buffer {
    return this.deps.cipher.open(record.secretCiphertext);
  }

  /**
   * What a client needs to verify the tenant's checks offline: the current key's id and its public
   * half as PEM (null with HMAC, whose checks only the service can verify).
   */
  async publicKey(tenant: Tenant): Promise<PublicSigningKey> {
    const record = await this.current(tenant.organisationId);
    return { id: record.id, organisationId: record.organisationId, publicKeyPem: this.publicKeyPem(record), createdAt: record.createdAt };
  }

  /** The key's public half as PEM, or null for HMAC. */
  publicKeyPem(record: SigningKey): string | null {
    return this.deps.scheme.publicKeyPem(record);
  }

  heldKey(organisationId: Id): object | undefined {
    return this.live ? this.cache.peek(organisationId) : undefined;
  }

  /** Drops the cached key of an organisation (its keys changed). */
  forget(organisationId: Id): void {
    this.epoch++;
    this.cache.delete(organisationId);
  }

  /**
   * Whether the cache may be trusted (the change feed is heard). Trusted again, it starts empty;
   * distrusted, its keys stay for signing from memory during a database outage only.
   */
  setLive(live: boolean): void {
    if (live) this.cache.clear();
    this.epoch++;
    this.live = live;
  }

  private async loadCurrent(organisationId: Id): Promise<LiveKey> {
    const cached = this.live ? this.cache.get(organisationId) : undefined;
    if (cached) return cached;
    let mark = this.epoch;
    let current = await this.readCurrent(organisationId);
    if (mark !== this.epoch) {
      // The read raced a forget or a trust change, so it may hold the key a rotation replaced: read
      // once more. (An organisation's first use races its own key's creation, which the change
      // feed reports back: the second read finds that key and keeps it.)
      mark = this.epoch;
      current = await this.readCurrent(organisationId);
    }
    // Kept only when nothing raced the read that gave it; otherwise used once.
    if (this.live && mark === this.epoch) this.cache.set(organisationId, current);
    return current;
  }

  /** The organisation's newest active key from the database (created when it has none), decrypted. */
  private async readCurrent(organisationId: Id): Promise<LiveKey> {
    const record = await this.deps.uow.run(async (r) => {
      const [newest] = await r.signingKeys.listActive(organisationId, this.deps.scheme.algorithm);
      return newest ?? this.create(organisationId, (k) => r.signingKeys.save(k));
    });
    return { record, key: this.deps.scheme.load(this.reveal(record)), publicHash: this.deps.scheme.publicHash(record) };
  }

  private async create(organisationId: Id, save: (k: SigningKey) => Promise<void>, notBefore?: Date): Promise<SigningKey> {
    const now = this.deps.clock.now();
    const { publicKey, secret } = this.deps.scheme.generate();
    const record: SigningKey = {
      id: this.deps.ids.newId(),
      organisationId,
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
