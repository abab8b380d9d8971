import { DomainError, ErrorCodes, type Core } from '@tollgate/core';

/**
 * The core as a request sees it when the database goes down right after one write committed:
 * every call of any service made after `write` ("service.method") resolved fails as an outage
 * does (503 DATABASE_UNAVAILABLE). A route whose answer reads anything after its commit fails its
 * test, whichever service it reads through; calls before the write (authentication, the route's
 * own checks) pass. One per request: once down, it stays down.
 */
export function coreDownAfter(core: Core, write: string): Core & { wrote(): boolean } {
  const [service, method] = write.split('.');
  let down = false;
  const gone = () => Promise.reject(new DomainError(ErrorCodes.DATABASE_UNAVAILABLE, 'the database is unavailable (down after the write)'));
  const services = new Map<PropertyKey, unknown>();
  const wrap = (name: PropertyKey, svc: object) =>
    new Proxy(svc, {
      get(target, m) {
        const fn = Reflect.get(target, m) as unknown;
        if (typeof fn !== 'function') return fn;
        return (...args: unknown[]) => {
          if (down) return gone();
          const out = (fn as (...a: unknown[]) => unknown).apply(target, args);
          if (name !== service || m !== method) return out;
          return Promise.resolve(out).then((v) => {
            down = true;
            return v;
          });
        };
      },
    });
  return new Proxy(core, {
    get(target, name) {
      if (name === 'wrote') return () => down;
      const svc = Reflect.get(target, name) as unknown;
      if (typeof svc !== 'object' || svc === null) return svc;
      if (!services.has(name)) services.set(name, wrap(name, svc));
      return services.get(name);
    },
  }) as Core & { wrote(): boolean };
}
