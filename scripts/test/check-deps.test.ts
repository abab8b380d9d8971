import path from 'node:path';
import { execFileSync } from 'node:child_process';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkPackage } = require('../check-deps.js');

const script = path.join(__dirname, '..', 'check-deps.js');
const fixture = (name: string) => path.join(__dirname, 'fixtures', name);

describe('dependency-direction check', () => {
  it('reports every framework or driver import and any runtime dependency', () => {
    const problems: string[] = checkPackage(fixture('bad-core'));
    expect(problems.join('\n')).toMatch(/dependencies must be empty, has express/);
    for (const name of ['express', 'kysely', 'pg', 'stripe']) {
      expect(problems.some((p) => p.includes(`imports '${name}'`))).toBe(true);
    }
    expect(problems.some((p) => p.includes('node:crypto'))).toBe(false);
  });

  it('fails the command (and so the build) on a bad package, passes on a clean one', () => {
    expect(() => execFileSync('node', [script, fixture('bad-core')], { stdio: 'pipe' })).toThrow();
    expect(execFileSync('node', [script, fixture('good-core')], { stdio: 'pipe' }).toString()).toMatch(/imports only/);
  });

  it('passes on the real core package', () => {
    expect(checkPackage(path.join(__dirname, '..', '..', 'packages', 'core'))).toEqual([]);
  });
});
