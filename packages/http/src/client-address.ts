import type { IncomingMessage } from 'node:http';

/**
 * The client's address, the one way every limiter and log line reads it. `trustedProxies` is how
 * many reverse proxies stand in front of this instance (`TRUST_PROXY`): 0 (default) takes the
 * socket's address and ignores `X-Forwarded-For`, which any client can write; N takes the Nth
 * address from the right of `X-Forwarded-For`, the one the outermost trusted proxy saw (each proxy
 * appends the address it received from). Fewer entries than proxies: the leftmost one given.
 */
export function clientAddress(req: IncomingMessage, trustedProxies = 0): string {
  const socket = req.socket?.remoteAddress ?? 'unknown';
  if (trustedProxies <= 0) return socket;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw) return socket;
  const hops = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!hops.length) return socket;
  return hops[Math.max(0, hops.length - trustedProxies)];
}

/** Path prefixes whose next segment is a signed token: logged as `[token]`, so logs never carry a usable link. */
const TOKEN_PATHS = ['/checkout/start/'];

/** A request path as it may be logged: without the signed tokens some paths carry. */
export function loggablePath(path: string): string {
  for (const prefix of TOKEN_PATHS)
    if (path.startsWith(prefix)) return `${prefix}[token]${path.slice(prefix.length).replace(/^[^/]*/, '')}`;
  return path;
}
