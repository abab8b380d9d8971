import { createHash, createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import type { Clock, SignedMessage, Signer, SigningAlgorithm, SigningKey, UnitOfWork } from '@tollgate/core';
import { SecretBox } from './secret-box';

/** A usable key: the record and its decrypted secret. */
interface LiveKey {
  record: SigningKey;
  secret: KeyObject | Buffer;
  loadedAt: number;
}

/** How long an instance signs with a key before looking again for a newer one (rotation). */
const CACHE_MS = 60_000;

/**
 * Signs with the organisation's newest active key of one algorithm, creating it on first use.
 * Keys are stored encrypted; old keys stay active (and listed) until retired, so a rotation never
 * breaks verification of checks signed just before it.
 */
abstract class StoredKeySigner implements Signer {
  private readonly cache = new Map<string, LiveKey>();
  private readonly box: SecretBox;

  constructor(
    protected readonly deps: { uow: UnitOfWork; clock: Clock; masterSecret: string },
    readonly algorithm: SigningAlgorithm,
  ) {
    this.box = new SecretBox(deps.masterSecret);
  }

  protected abstract generate(): { publicKey: string; secret: Buffer };
  protected abstract load(record: SigningKey, secret: Buffer): KeyObject | Buffer;
  protected abstract signWith(key: LiveKey, message: string, encoding: 'der' | 'p1363'): SignedMessage;

  async sign(organisationId: string, message: string, options: { encoding?: 'der' | 'p1363' } = {}): Promise<SignedMessage> {
    return this.signWith(await this.currentKey(organisationId), message, options.encoding ?? 'der');
  }

  /** The organisation's current key (created when it has none). */
  async currentKey(organisationId: string): Promise<LiveKey> {
    const cached = this.cache.get(organisationId);
    if (cached && Date.now() - cached.loadedAt < CACHE_MS) return cached;
    const record = await this.deps.uow.run(async (r) => {
      const [newest] = await r.signingKeys.listActive(organisationId, this.algorithm);
      if (newest) return newest;
      return this.create(organisationId, (k) => r.signingKeys.save(k));
    });
    const live = { record, secret: this.load(record, this.box.open(record.secretCiphertext)), loadedAt: Date.now() };
    this.cache.set(organisationId, live);
    return live;
  }

  /** Creates a new key that signs from now on; older keys stay active until retired. */
  async rotate(organisationId: string): Promise<SigningKey> {
    const record = await this.deps.uow.run((r) => this.create(organisationId, (k) => r.signingKeys.save(k)));
    this.cache.delete(organisationId);
    return record;
  }

  /** Every active key of the organisation, newest first (the current one first). */
  async activeKeys(organisationId: string): Promise<SigningKey[]> {
    return this.deps.uow.run((r) => r.signingKeys.listActive(organisationId, this.algorithm));
  }

  /** The decrypted secret of a key (HMAC secrets are shown to the vendor by the CLI). */
  reveal(record: SigningKey): Buffer {
    return this.box.open(record.secretCiphertext);
  }

  private async create(organisationId: string, save: (k: SigningKey) => Promise<void>): Promise<SigningKey> {
    const { publicKey, secret } = this.generate();
    const record: SigningKey = {
      id: randomUUID(), organisationId, algorithm: this.algorithm, publicKey, secretCiphertext: this.box.seal(secret),
      createdAt: this.deps.clock.now(), retiredAt: null,
    };
    await save(record);
    return record;
  }
}

/** ECDSA P-256 / SHA-256: `publicHash` is the uncompressed public key (hex); verifiable offline. */
export class EcdsaSigner extends StoredKeySigner {
  constructor(deps: { uow: UnitOfWork; clock: Clock; masterSecret: string }) {
    super(deps, 'ecdsa-p256');
  }

  protected generate() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return { publicKey: uncompressedHex(publicKey), secret: privateKey.export({ format: 'der', type: 'pkcs8' }) };
  }

  protected load(_record: SigningKey, secret: Buffer): KeyObject {
    return createPrivateKey({ key: secret, format: 'der', type: 'pkcs8' });
  }

  protected signWith(key: LiveKey, message: string, encoding: 'der' | 'p1363'): SignedMessage {
    const signature = cryptoSign('sha256', Buffer.from(message, 'utf8'), { key: key.secret as KeyObject, dsaEncoding: encoding === 'p1363' ? 'ieee-p1363' : 'der' });
    return { signature: signature.toString('hex'), publicHash: key.record.publicKey };
  }

  /** The key's public half as PEM (SPKI), for `tollgate keys signing`. */
  static publicPem(record: SigningKey): string {
    return publicKeyFromUncompressedHex(record.publicKey).export({ format: 'pem', type: 'spki' }).toString();
  }
}

/** HMAC-SHA256 with a per-organisation secret: `publicHash` is SHA-256 hex of the key id. */
export class HmacSigner extends StoredKeySigner {
  constructor(deps: { uow: UnitOfWork; clock: Clock; masterSecret: string }) {
    super(deps, 'hmac-sha256');
  }

  protected generate() {
    return { publicKey: '', secret: randomBytes(32) };
  }

  protected load(_record: SigningKey, secret: Buffer): Buffer {
    return secret;
  }

  protected signWith(key: LiveKey, message: string): SignedMessage {
    return {
      signature: createHmac('sha256', key.secret as Buffer).update(message, 'utf8').digest('hex'),
      publicHash: createHash('sha256').update(key.record.id).digest('hex'),
    };
  }
}

/** The uncompressed EC point (04 || X || Y) of a public key, in hex. */
export function uncompressedHex(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  return `04${Buffer.from(jwk.x as string, 'base64url').toString('hex')}${Buffer.from(jwk.y as string, 'base64url').toString('hex')}`;
}

/** A P-256 public key from its uncompressed hex form (what a check's `publicHash` carries). */
export function publicKeyFromUncompressedHex(hex: string): KeyObject {
  const raw = Buffer.from(hex, 'hex');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('not an uncompressed P-256 public key');
  return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') }, format: 'jwk' });
}
