import { ErrorCodes, IdempotencyService } from '../src';
import { createTestCore, FixedClock, InMemoryUnitOfWork, SeededRandomness } from '../src/testing';

describe('core reaches randomness and time through its ports', () => {
  it('draws API key secrets from the Randomness port', async () => {
    const keyOf = async (random: SeededRandomness) => {
      const core = createTestCore({ random });
      await core.apiKeys.ensureOrganisation('acme');
      return (await core.apiKeys.create({ organisation: 'acme', scopes: ['*'], isTest: false })).plaintext;
    };
    const [a, b, c] = [
      await keyOf(new SeededRandomness('seed')),
      await keyOf(new SeededRandomness('seed')),
      await keyOf(new SeededRandomness()),
    ];
    expect(a).toMatch(/^live_[A-Za-z0-9_-]{32}$/);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  it('measures the idempotency wait on the clock port, not the wall clock', async () => {
    // A monotonic reading that leaps a minute each time it is read: the 10 s wait is over at once.
    const clock = new (class extends FixedClock {
      reads = 0;
      override monotonicMs(): number {
        return ++this.reads * 60_000;
      }
    })();
    const idempotency = new IdempotencyService({ uow: new InMemoryUnitOfWork(), clock });
    expect(await idempotency.begin('org', 'key-1', 'POST /x 1')).toEqual({ kind: 'run' });
    await expect(idempotency.begin('org', 'key-1', 'POST /x 1')).rejects.toMatchObject({ code: ErrorCodes.IDEMPOTENCY_KEY_IN_USE });
    // The first request read it once; the second read it to start its wait and to find the wait over.
    expect(clock.reads).toBe(3);
  });

  it('SeededRandomness gives the asked number of bytes, the same for a seed and new ones each call', () => {
    const [x, y] = [new SeededRandomness('s'), new SeededRandomness('s')];
    const first = x.bytes(40);
    expect(first).toHaveLength(40);
    expect(y.bytes(40).equals(first)).toBe(true);
    expect(x.bytes(40).equals(first)).toBe(false);
    expect(new SeededRandomness().bytes(16).equals(new SeededRandomness().bytes(16))).toBe(false);
  });
});
