import { randomBytes } from 'node:crypto';
import type { Randomness } from '@tollgate/core';

/** The operating system's CSPRNG (node:crypto). */
export class CryptoRandomness implements Randomness {
  bytes(size: number): Buffer {
    return randomBytes(size);
  }
}
