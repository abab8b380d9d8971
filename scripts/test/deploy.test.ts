import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

// Docker is not on this machine: the Dockerfile's steps run in CI through scripts/dockerfile-run.js,
// and compose.yaml's structure is checked here (what `docker compose config` would not catch either).
const ROOT = path.join(__dirname, '..', '..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
  volumes?: string[];
}

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
  const s = compose.services;

  it('runs PostgreSQL 16 with a health check and a named volume', () => {
    expect(s.postgres.image).toMatch(/^postgres:16/);
    expect(s.postgres.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(s.postgres.volumes).toContain('postgres-data:/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes)).toContain('postgres-data');
  });

  it('runs two Tollgate instances of this Dockerfile on that database, healthy by /readyz', () => {
    for (const name of ['tollgate-1', 'tollgate-2']) {
      const t = s[name];
      expect(t.build).toBe('.');
      expect(t.environment?.DATABASE_URL).toMatch(/^postgres:\/\/tollgate:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/tollgate$/);
      // Secrets come from the environment and are required, never written in the file.
      expect(t.environment?.TOLLGATE_SECRET).toMatch(/^\$\{TOLLGATE_SECRET:\?/);
      expect(t.depends_on?.postgres.condition).toBe('service_healthy');
      expect(t.healthcheck?.test.join(' ')).toContain('/readyz');
    }
  });

  it('sets only variables the configuration knows (docs/configuration.md)', () => {
    const documented = read('docs/configuration.md');
    for (const t of [s['tollgate-1'], s['tollgate-2']])
      for (const key of Object.keys(t.environment ?? {}))
        expect({ key, documented: documented.includes(`\`${key}\``) }).toEqual({ key, documented: true });
  });

  it('puts a reverse proxy on one port in front of both instances', () => {
    expect(s.proxy.ports).toHaveLength(1);
    expect(s.proxy.depends_on?.['tollgate-1'].condition).toBe('service_healthy');
    expect(s.proxy.depends_on?.['tollgate-2'].condition).toBe('service_healthy');
    const mount = s.proxy.volumes?.find((v) => v.includes('nginx'));
    const file = (mount as string).split(':')[0];
    const conf = read(file);
    expect(conf).toMatch(/server tollgate-1:3000/);
    expect(conf).toMatch(/server tollgate-2:3000/);
    expect(conf).toMatch(/proxy_pass http:\/\/tollgate;/);
  });
});

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const stages = text.split(/^FROM /m).slice(1);

  it('builds in one stage and runs in another, from production dependencies only, as a non-root user', () => {
    expect(stages).toHaveLength(2);
    const [build, final] = stages;
    expect(build).toMatch(/RUN npm ci/);
    expect(build).toMatch(/RUN npm run build/);
    expect(final).toMatch(/COPY --from=build /);
    expect(final).toMatch(/RUN npm ci --omit=dev/);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^HEALTHCHECK .*\/readyz/m);
    expect(final).toMatch(/^CMD \["node", "apps\/server\/dist\/main.js"\]$/m);
    expect(fs.existsSync(path.join(ROOT, 'apps', 'server', 'src', 'main.ts'))).toBe(true);
  });

  it('keeps the build context free of installs, builds and local data', () => {
    const ignore = read('.dockerignore').split('\n');
    for (const p of ['node_modules', '**/node_modules', '**/dist', 'data', '.git']) expect(ignore).toContain(p);
  });
});
