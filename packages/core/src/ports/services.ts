import type { Id } from '../model';

export interface Clock {
  /** The current time. */
  now(): Date;
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
  /** Signs `message` with the organisation's current key (`p1363`: raw r||s for ECDSA; default DER). */
  sign(organisationId: Id, message: string, options?: { encoding?: 'der' | 'p1363' }): Promise<SignedMessage>;
}

export interface EventQueue {
  /** Tells the worker that events were queued, so it need not wait for its next poll. */
  wake(): void;
}
