import { createHash } from 'node:crypto';

/**
 * Escaping for server-rendered HTML, shared by every page the service renders (the sandbox's
 * hosted pages, the hosted pricing table): pure string work, no framework.
 */

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

/** A tagged template that escapes every interpolation unless it is already `Html`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Html ? x.text : esc(x))).join('') : v instanceof Html ? v.text : esc(v);
    out += part + strings[i + 1];
  });
  return new Html(out);
}

/** The CSP source of an inline `<style>` or `<script>` whose content is exactly `text`. */
export const cspHash = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

export interface PagePolicy {
  /** `style-src` sources: `'self'` (served files) and `cspHash` of inline styles. */
  styles?: string[];
  /** `script-src` sources (none: no script runs). */
  scripts?: string[];
  /** Further directives, as `img-src 'self' data:`. */
  extra?: string[];
  /** The page's address carries a secret (a signed token, a session id): sent to no other page. */
  secretUrl?: boolean;
}

/**
 * The security headers of an HTML page: a Content-Security-Policy allowing only what the page
 * loads (`default-src 'none'`), never framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`),
 * no `<base>` (`base-uri 'none'`); `Referrer-Policy: no-referrer` when its address holds a secret.
 * `form-action` is left out on purpose: browsers apply it to the redirect after a form is sent
 * (a checkout's 303 to the vendor's success page).
 */
export function pageSecurityHeaders(policy: PagePolicy): Record<string, string> {
  const directives = [
    "default-src 'none'",
    policy.styles?.length ? `style-src ${policy.styles.join(' ')}` : undefined,
    policy.scripts?.length ? `script-src ${policy.scripts.join(' ')}` : undefined,
    ...(policy.extra ?? []),
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].filter((d): d is string => !!d);
  return {
    'Content-Security-Policy': directives.join('; '),
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': policy.secretUrl ? 'no-referrer' : 'strict-origin-when-cross-origin',
  };
}
