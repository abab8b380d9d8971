import { FakeScheme, buyPlan, createTestCore, seedSample, type TestCore } from '../src/testing';
import type { Tenant } from '../src';

// Security audit: signing keys belong to an organisation AND a mode. A test-mode API key (shared
// with CI and developers) must not obtain a signature that the vendor's live app accepts.

const scheme = new FakeScheme();

/** Whether `signature` of `message` verifies with the tenant's current key (as a client holding that key would check). */
async function verifiesWith(core: TestCore, tenant: Tenant, message: string, signature: string): Promise<boolean> {
  const key = await core.signing.current(tenant);
  return scheme.verify({ secret: core.signing.reveal(key) }, message, signature);
}

async function seedBothModes(core: TestCore) {
  const live = await seedSample(core, 'acme');
  const test = await seedSample(core, 'acme', true);
  expect(test.tenant.organisationId).toBe(live.tenant.organisationId);
  return { live, test };
}

describe.each([
  ['from the database', false],
  ['with the change feed heard (keys held in memory, signed without waiting)', true],
])('signing keys per mode, %s', (_name, listening) => {
  it('gives the test and the live mode of one organisation different keys; a test check does not verify with the live key', async () => {
    const core = createTestCore();
    if (listening) await core.listen();
    const { live, test } = await seedBothModes(core);
    // The same grantee holds the same capabilities in both modes: the signed text is the same.
    await buyPlan(core, live.keys['plans.notes.team'], 2, 'alice');
    await buyPlan(core, test.keys['plans.notes.team'], 2, 'alice');
    const ask = (t: typeof live) =>
      core.checks.check(t.tenant, { productId: t.keys['products.notes'], granteeIds: ['alice'], graceDays: 0, encoding: 'der' });
    // Live first (so that a key shared by organisation would be created and held by now), then test, twice each.
    const liveCheck = await ask(live);
    const testCheck = await ask(test);
    expect(await ask(live)).toEqual(liveCheck);
    expect(await ask(test)).toEqual(testCheck);
    expect(testCheck?.capsHashed).toBe(liveCheck?.capsHashed);

    const livePublic = await core.signing.publicKey(live.tenant);
    const testPublic = await core.signing.publicKey(test.tenant);
    expect(testPublic.id).not.toBe(livePublic.id);
    expect(testPublic.organisationId).toBe(livePublic.organisationId);
    expect(testCheck?.publicHash).not.toBe(liveCheck?.publicHash);
    expect(testCheck?.signature).not.toBe(liveCheck?.signature);

    const caps = liveCheck!.capsHashed;
    expect(await verifiesWith(core, live.tenant, caps, liveCheck!.signature)).toBe(true);
    expect(await verifiesWith(core, live.tenant, caps, testCheck!.signature)).toBe(false);
    expect(await verifiesWith(core, test.tenant, caps, testCheck!.signature)).toBe(true);
    if (listening) {
      // The keys held in memory are held per mode too.
      expect(core.signing.signHeld(live.tenant, caps)?.signature).toBe(liveCheck!.signature);
      expect(core.signing.signHeld(test.tenant, caps)?.signature).toBe(testCheck!.signature);
      expect(core.signing.heldKey(test.tenant)).not.toBe(core.signing.heldKey(live.tenant));
    }
  });

  it('signs a test-mode entitlement answer with the test key: the live key refuses it', async () => {
    const core = createTestCore();
    if (listening) await core.listen();
    const { live, test } = await seedBothModes(core);
    await buyPlan(core, test.keys['plans.notes.team'], 2, 'alice');
    const answer = await core.entitlements.check(test.tenant, 'alice');
    expect(answer.signed).toContain('"granteeId":"alice"');
    expect(await verifiesWith(core, live.tenant, answer.signed, answer.signature)).toBe(false);
    expect(await verifiesWith(core, test.tenant, answer.signed, answer.signature)).toBe(true);
  });

  it("rotates one mode's key only: rotating the test key leaves the live current key (and held signatures) unchanged", async () => {
    const core = createTestCore();
    if (listening) await core.listen();
    const { live, test } = await seedBothModes(core);
    const liveBefore = await core.signing.current(live.tenant);
    const testBefore = await core.signing.current(test.tenant);
    const liveSigned = await core.signing.sign(live.tenant, 'edit,export');

    const rotated = await core.signing.rotate(test.tenant);
    expect(rotated).toMatchObject({ organisationId: test.tenant.organisationId, isTest: true });
    expect((await core.signing.current(test.tenant)).id).toBe(rotated.id);
    expect((await core.signing.current(live.tenant)).id).toBe(liveBefore.id);
    expect(await core.signing.sign(live.tenant, 'edit,export')).toEqual(liveSigned);
    expect((await core.signing.active(test.tenant)).map((k) => k.id)).toEqual([rotated.id, testBefore.id]);
    expect((await core.signing.active(live.tenant)).map((k) => k.id)).toEqual([liveBefore.id]);
    expect((await core.signing.publicKey(live.tenant)).id).toBe(liveBefore.id);

    // And the other way round.
    const liveRotated = await core.signing.rotate(live.tenant);
    expect((await core.signing.current(live.tenant)).id).toBe(liveRotated.id);
    expect((await core.signing.current(test.tenant)).id).toBe(rotated.id);
  });
});
