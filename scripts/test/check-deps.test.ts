import path from 'node:path';
import { execFileSync } from 'node:child_process';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkHouse, checkPackage } = require('../check-deps.js');

const script = path.join(__dirname, '..', 'check-deps.js');
const fixture = (name: string) => path.join(__dirname, 'fixtures', name);

describe('dependency-direction check', () => {
  it('reports every framework or driver import and any runtime dependency', () => {
    const problems: string[] = checkPackage(fixture('bad-core'));
    expect(problems.join('\n')).toMatch(/dependencies must be empty, has express/);
    for (const name of ['express', 'kysely', 'pg', 'stripe', 'reflect-metadata']) {
      expect(problems.some((p) => p.includes(`imports '${name}'`))).toBe(true);
    }
    expect(problems.some((p) => p.includes('node:crypto'))).toBe(false);
  });

  it('fails the command (and so the build) on a bad package, passes on a clean one', () => {
    expect(() => execFileSync('node', [script, '--package', fixture('bad-core')], { stdio: 'pipe' })).toThrow();
    expect(execFileSync('node', [script, '--package', fixture('good-core')], { stdio: 'pipe' }).toString()).toMatch(/keeps the rules/);
  });

  it("fails an upward import between core's layers, and an import circle", () => {
    const problems: string[] = checkPackage(fixture('bad-core-layers'));
    const upward = (file: string, to: string) =>
      problems.some((p) => p.includes(`src/${file}: imports`) && p.includes(`(${to}), an upward import`));
    expect(upward('domain/rule.ts', 'usecases')).toBe(true);
    expect(upward('model/plan.ts', 'ports')).toBe(true);
    expect(upward('ports/repo.ts', 'usecases')).toBe(true);
    expect(upward('support/text.ts', 'domain')).toBe(true);
    expect(upward('usecases/service.ts', 'testing')).toBe(true);
    expect(problems.filter((p) => p.includes('upward'))).toHaveLength(5);
    expect(problems.filter((p) => p.startsWith('import circle:'))).toEqual([
      expect.stringMatching(/domain\/a\.ts -> .*domain\/b\.ts -> .*domain\/a\.ts$/),
    ]);
    expect(() => execFileSync('node', [script, '--package', fixture('bad-core-layers')], { stdio: 'pipe' })).toThrow(/upward import/);
    // Layered the right way round, with a type-only import back (erased: no circle), it passes.
    expect(checkPackage(fixture('good-core'))).toEqual([]);
  });

  it('passes on the real core package', () => {
    expect(checkPackage(path.join(__dirname, '..', '..', 'packages', 'core'))).toEqual([]);
  });

  it('fails each rule of the house on a fixture that breaks it', () => {
    const problems: string[] = checkHouse(fixture('bad-house'));
    const has = (file: string, spec: string, rule: RegExp) =>
      problems.some((p) => p.startsWith(file) && p.includes(`'${spec}'`) && rule.test(p));
    expect(has('packages/adapter-a/src/index.ts', '@tollgate/adapter-b', /adapter imports only @tollgate\/core/)).toBe(true);
    expect(has('packages/adapter-a/src/index.ts', '@tollgate/http', /adapter imports only/)).toBe(true);
    expect(has('apps/shop/src/app.ts', '@tollgate/adapter-stripe', /apps never import adapters/)).toBe(true);
    expect(has('apps/shop/src/app.ts', '@tollgate/runtime', /only main.ts builds the runtime/)).toBe(true);
    expect(has('apps/shop/src/app.ts', 'inversify', /packages\/runtime only/)).toBe(true);
    expect(has('packages/http/src/index.ts', '@tollgate/runtime', /http never imports runtime/)).toBe(true);
    expect(problems).toContain('import circle: packages/http/src/a.ts -> packages/http/src/b.ts -> packages/http/src/a.ts');
    expect(problems).toContain('package circle: @tollgate/app-shop -> @tollgate/app-till -> @tollgate/app-shop');
    // The top floor and the composition root may do what the rest may not.
    expect(problems.some((p) => p.startsWith('apps/shop/src/main.ts') || p.startsWith('packages/runtime'))).toBe(false);
    expect(() => execFileSync('node', [script, fixture('bad-house')], { stdio: 'pipe' })).toThrow();
    expect(checkHouse(fixture('good-house'))).toEqual([]);
  });

  it('passes on this repository', () => {
    expect(checkHouse(path.join(__dirname, '..', '..'))).toEqual([]);
  });
});
