import { createTestCore } from '../src/testing';

/* `tollgate orgs create ""` (and names with blanks around them) made an organisation no `--org`
   finds comfortably: a new organisation's name is refused when blank or not trimmed. */
describe('ApiKeyService.ensureOrganisation', () => {
  it('refuses a blank name, or blanks around it, with VALIDATION_FAILED naming name, and makes none', async () => {
    const core = createTestCore();
    for (const [name, error] of [
      ['', 'must not be blank'],
      [' \t', 'must not be blank'],
      [' acme', 'must not begin or end with blanks (spaces, tabs or line breaks)'],
      ['acme\n', 'must not begin or end with blanks (spaces, tabs or line breaks)'],
    ])
      await expect(core.apiKeys.ensureOrganisation(name)).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ property: 'name', error }],
      });
    expect(await core.apiKeys.organisations()).toEqual([]);
    expect((await core.apiKeys.ensureOrganisation('two words')).name).toBe('two words');
  });
});
