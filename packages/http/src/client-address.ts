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

/**
 * Path prefixes whose next segment is a signed token: logged as `[token]`, so logs never carry a
 * usable link. Compared as Express routes: in any case, after repeated slashes and escapes.
 */
const TOKEN_PATHS = ['/checkout/start/'];
/**
 * A signed link's token anywhere else in a path (a mistyped route, a proxy's prefix): `<body>.<mac>`
 * in base64url, its body JSON (`{"` is `eyJ`), its MAC HMAC-SHA256's 43 characters; a body alone too
 * (it carries the customer's email).
 */
const TOKEN_SHAPE =
  /(?<![A-Za-z0-9_-])(?:eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?|[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-]))/g;

/**
 * What any path `loggablePath` redacts has: a token's `.` or `eyJ` (its JSON body), an escape that
 * may spell either, or a checkout link's `checkout` (in any case).
 */
const MAY_CARRY_TOKEN = /[%.]|eyJ|checkout/i;

/** Percent-escapes decoded where they decode (`%2F` too); a run that is not UTF-8 stays as written. */
const decodeEscapes = (path: string): string =>
  path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });

/**
 * A request path as it may be logged: without the signed tokens some paths carry. Read as Express
 * routes it (any case, `//` as `/`) and decoded (`/checkout%2Fstart/...`), so no spelling of a
 * checkout link that routes, or that misses by a character, logs its token; a path without a
 * token is logged as given.
 */
export function loggablePath(path: string): string {
  // Most paths carry no token: every signed link's token has a `.` or its body's `eyJ`, written or
  // escaped (`%`), and a checkout link says `checkout`. Such a path is logged as given, unread.
  if (!MAY_CARRY_TOKEN.test(path)) return path;
  const seen = decodeEscapes(path).replace(/\/{2,}/g, '/');
  const lower = seen.toLowerCase();
  for (const prefix of TOKEN_PATHS)
    if (lower.startsWith(prefix))
      // The segment after the prefix, whatever it is; and a token further on (`/checkout/start/x/<token>`).
      return `${prefix}[token]${seen
        .slice(prefix.length)
        .replace(/^[^/]*/, '')
        .replace(TOKEN_SHAPE, '[token]')}`;
  const redacted = seen.replace(TOKEN_SHAPE, '[token]');
  return redacted === seen ? path : redacted;
}

/** The path of a request as it may be logged: the whole path it was sent to (not a router's part of it), no query string. */
export function loggableRequestPath(req: { originalUrl?: string; url?: string }): string {
  const url = req.originalUrl ?? req.url ?? '/';
  const q = url.indexOf('?');
  return loggablePath(q < 0 ? url : url.slice(0, q));
}
