import type { Id } from './common';

export interface Organisation {
  id: Id;
  /** Unique, human-chosen name (the `organisation` of the catalog file). */
  name: string;
  createdAt: Date;
}

/**
 * Scopes are `<resource>:read` / `<resource>:write`, or `*` for everything. `checks` is read only:
 * the signed capability/entitlement checks and the public signing key, nothing else (a browser's
 * scope); `licenses:read` holds it too (see `hasScope`).
 */
export const SCOPE_RESOURCES = [
  'products',
  'plans',
  'pricing-tables',
  'subscriptions',
  'licenses',
  'webhooks',
  'events',
  'meters',
  'usage',
  'owners',
  'grantees',
  'api-keys',
  'payment-integrations',
  'carts',
  'checks',
] as const;
export type ScopeResource = (typeof SCOPE_RESOURCES)[number];
/** Resources with a read scope only (nothing to write). */
export const READ_ONLY_SCOPE_RESOURCES = ['checks'] as const satisfies readonly ScopeResource[];
export type Scope = Exclude<`${ScopeResource}:${'read' | 'write'}`, `${(typeof READ_ONLY_SCOPE_RESOURCES)[number]}:write`> | '*';
/** Every scope a key may hold. */
export const SCOPE_NAMES: readonly Scope[] = [
  '*',
  ...SCOPE_RESOURCES.flatMap((r) =>
    (READ_ONLY_SCOPE_RESOURCES as readonly string[]).includes(r) ? [`${r}:read` as Scope] : [`${r}:read` as Scope, `${r}:write` as Scope],
  ),
];

export interface ApiKey {
  id: Id;
  organisationId: Id;
  name: string;
  /** SHA-256 hex of the whole key; the key itself is never stored. */
  keyHash: string;
  /** First characters of the key, enough to recognise it in a listing. */
  prefix: string;
  scopes: Scope[];
  isTest: boolean;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface PaymentIntegration {
  id: Id;
  organisationId: Id;
  isTest: boolean;
  /** `sandbox` or `stripe`. */
  integrationName: string;
  accountName: string;
  accountId: string;
  accountData: Record<string, unknown>;
  updatedAt: Date;
}

export type SigningAlgorithm = 'ecdsa-p256' | 'hmac-sha256';

/**
 * A key an organisation's capability checks and entitlement answers are signed with, in one mode:
 * test-mode requests are signed with a test key, live ones with a live key, so a signature made
 * with a (widely shared) test-mode API key never verifies against the live public key.
 */
export interface SigningKey {
  id: Id;
  organisationId: Id;
  /** The mode whose requests the key signs. */
  isTest: boolean;
  algorithm: SigningAlgorithm;
  /** ECDSA: the uncompressed public key in hex; HMAC: empty. */
  publicKey: string;
  /** The private key (ECDSA, PKCS#8 DER) or secret (HMAC), encrypted at rest by the signer adapter. */
  secretCiphertext: string;
  createdAt: Date;
  /** Set when the key no longer signs nor verifies. */
  retiredAt: Date | null;
}
