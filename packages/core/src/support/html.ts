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
