import type { Id, SigningAlgorithm, SigningKey, Tenant } from '../model';

export interface Clock {
  /** The current time. */
  now(): Date;
  /** A monotonic reading in milliseconds, for measuring how long something takes (not a date; never goes back). */
  monotonicMs(): number;
}

/** Unpredictable bytes from a cryptographically secure source: API key secrets, tokens. */
export interface Randomness {
  /** `size` fresh random bytes. */
  bytes(size: number): Buffer;
}

/**
 * Tamper-proof, expiring links (deferred checkout links of pricing tables, the hosted pages' links):
 * a token carries its payload and expiry, and only the holder of the link secret can make one.
 */
export interface SignedLinks {
  /** A URL-safe token carrying `payload` until `ttlMs` after `now`. */
  sign(payload: object, ttlMs: number, now: Date): string;
  /** The payload (with its expiry `exp`, epoch milliseconds), or undefined when the token is forged, garbled or expired at `now`. */
  verify<T>(token: string, now: Date): T | undefined;
}

export interface IdGenerator {
  /** A new UUID v4. */
  newId(): Id;
}

export interface SignedMessage {
  /** Hex signature of the message. */
  signature: string;
  /** Identifies the verifying key: the uncompressed public key (ECDSA) or a hash of the key id (HMAC). */
  publicHash: string;
}

export interface Signer {
  /**
   * Signs `message` with the current key of the tenant's organisation and mode (a test-mode
   * request's answers never verify with the live key) (`p1363`: raw r||s for ECDSA; default DER).
   * `fromMemory`: the database does not answer, sign with the key held in memory even though the
   * change feed is not heard (the check's outage grace); without one held, the outage error stands.
   */
  sign(tenant: Tenant, message: string, options?: { encoding?: 'der' | 'p1363'; fromMemory?: boolean }): Promise<SignedMessage>;
  /**
   * The tenant's current key as this instance holds it in memory (undefined when not held),
   * compared by identity: a signature made under it is still current while the same object comes back.
   */
  heldKey?(tenant: Tenant): object | undefined;
  /**
   * `sign` without waiting: with the tenant's current key as this instance holds it while the
   * change feed is heard (the key `sign` would use), or undefined when none is held (then `sign`).
   */
  signHeld?(tenant: Tenant, message: string, encoding?: 'der' | 'p1363'): SignedMessage | undefined;
}

export interface EventQueue {
  /**
   * Tells the worker that events were queued, so it need not wait for its next poll. The worker
   * must not run in the caller's async context (an idempotent request's joined transaction).
   */
  wake(): void;
}

export interface Logger {
  /** Something failed that an operator should see (never secrets or keys in `fields`). */
  error(message: string, fields?: Record<string, unknown>): void;
  /** Something worth recording in normal operation. */
  info(message: string, fields?: Record<string, unknown>): void;
}

export type SignatureEncoding = 'der' | 'p1363';

/**
 * A stateless signature scheme (ECDSA P-256, HMAC-SHA256): makes key material and signs with it.
 * Where keys live, when they rotate and how they are cached is the SigningKeys use case's business.
 */
export interface SignatureScheme<K = unknown> {
  /** The algorithm recorded on the keys this scheme makes. */
  readonly algorithm: SigningAlgorithm;
  /** New key material: the public part (empty for HMAC) and the secret to keep encrypted. */
  generate(): { publicKey: string; secret: Buffer };
  /** Prepares a secret for signing (parsed once, reused for every signature). */
  load(secret: Buffer): K;
  /** Hex signature of `message` (`p1363`: raw r||s for ECDSA; HMAC ignores the encoding). */
  sign(key: K, message: string, encoding: SignatureEncoding): string;
  /** Whether `signature` (hex) is a signature of `message` under the key (public key, or secret for HMAC). */
  verify(key: { publicKey: string; secret?: Buffer }, message: string, signature: string, encoding: SignatureEncoding): boolean;
  /** What a check names the verifying key by (`publicHash`). */
  publicHash(key: Pick<SigningKey, 'id' | 'publicKey'>): string;
  /** The public key as PEM (SPKI), or null for a symmetric scheme. */
  publicKeyPem(key: Pick<SigningKey, 'publicKey'>): string | null;
}

/** Encrypts secrets at rest (signing keys) under the deployment's master secret. */
export interface KeyCipher {
  /** The sealed (encrypted, authenticated) form of `plain`. */
  seal(plain: Buffer): string;
  /** The plain secret; throws when `sealed` was not sealed under this cipher's key. */
  open(sealed: string): Buffer;
}

/** What a committed change makes stale in the caches of every instance. */
export type CacheInvalidation =
  /** A license of this product held (or now held) by this grantee changed. */
  | { kind: 'license'; productId: Id; granteeId: string }
  /** The product, one of its plans or capabilities changed: every snapshot of the product is stale. */
  | { kind: 'product'; productId: Id }
  /** An API key changed (revoked): its cached authentication is stale. */
  | { kind: 'apiKey'; keyHash: string }
  /** The organisation's signing keys changed (rotated). */
  | { kind: 'signingKey'; organisationId: Id };

export interface ChangeFeedHandlers {
  /** A change committed (by any instance): evict what it names. */
  onChange(change: CacheInvalidation): void;
  /** Changes may be missed from now on (the listening connection dropped): caches must be emptied and bypassed. */
  onGap(): void;
  /** Listening again: caches may fill again (after being emptied once more). */
  onResume(): void;
}

/** The invalidations every instance hears (PostgreSQL NOTIFY delivered on commit; PGlite in process). */
export interface ChangeFeed {
  /** Starts listening; `onResume` is called once listening works (and after every reconnection). */
  start(handlers: ChangeFeedHandlers): Promise<void>;
  /** Whether changes are being heard right now. */
  listening(): boolean;
  /** Stops listening. */
  stop(): Promise<void>;
}

/** A webhook POST as the sender makes it. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** What came back: the receiver's status and (truncated) body, or why nothing did. */
export type WebhookResponse = { status: number; body: string } | { status: null; error: string };

/**
 * Signs outgoing webhooks and makes endpoint secrets (Standard Webhooks: an adapter holds the
 * crypto and the randomness, so core holds none).
 */
export interface WebhookSigner {
  /** A new endpoint secret (`whsec_` and the base64 of fresh random bytes). */
  newSecret(): string;
  /** The headers of one POST of `body`: the same `id` on every attempt, the timestamp of `at`, the signature. */
  headers(secret: string, id: string, at: Date, body: string): Record<string, string>;
}

/** POSTs webhooks to vendors' receivers (an adapter: timeouts, no redirects, private targets refused). */
export interface WebhookSender {
  /** Why this URL may not be a receiver (not http(s), a private or loopback address), or null. */
  refusal(url: string): string | null;
  /** POSTs once; never throws for the receiver's failures (they are answers too). */
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
