import { createTestCore, SeededRandomness } from '../src/testing';

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

  it('SeededRandomness gives the asked number of bytes, the same for a seed and new ones each call', () => {
    const [x, y] = [new SeededRandomness('s'), new SeededRandomness('s')];
    const first = x.bytes(40);
    expect(first).toHaveLength(40);
    expect(y.bytes(40).equals(first)).toBe(true);
    expect(x.bytes(40).equals(first)).toBe(false);
    expect(new SeededRandomness().bytes(16).equals(new SeededRandomness().bytes(16))).toBe(false);
  });
});
