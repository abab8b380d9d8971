import { createTestCore } from '../src/testing';

/* An API key made with no scope at all (`[]`, or only blanks as `--scopes ","` gives) is refused: it
   was read as `*`, a full-access key. */
describe('ApiKeyService.create with an empty scope list', () => {
  it('is VALIDATION_FAILED naming scopes, and makes no key', async () => {
    const core = createTestCore();
    await core.apiKeys.ensureOrganisation('empty-scopes');
    for (const scopes of [[], [' ', '']])
      await expect(core.apiKeys.create({ organisation: 'empty-scopes', scopes, isTest: false })).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ property: 'scopes' }],
      });
    expect(await core.apiKeys.list('empty-scopes')).toEqual([]);
    const made = await core.apiKeys.create({ organisation: 'empty-scopes', scopes: ['products:read'], isTest: false });
    expect(made.record.scopes).toEqual(['products:read']);
  });
});
