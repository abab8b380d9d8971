/** Server-rendered pages: semantic, accessible markup that works without JavaScript. */

import { cspHash, Html, html, pageSecurityHeaders } from '@tollgate/core';

export { esc, Html, html } from '@tollgate/core';

const STYLE = `
  body { font-family: system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1b1f24; }
  main { max-width: 34rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 12px; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { margin-top: 0; font-size: 1.6rem; }
  .badge { display: inline-block; background: #fff4d6; color: #6b4e00; padding: .2rem .6rem; border-radius: 999px; font-size: .85rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .5rem 1.5rem; }
  dt { font-weight: 600; } dd { margin: 0; }
  button { font: inherit; padding: .7rem 1.2rem; border-radius: 8px; border: 1px solid #0b5fff; background: #0b5fff; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #0b5fff; }
  button:focus-visible, a:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
  form { display: inline-block; margin: 1rem .5rem 0 0; }
  label { display: block; font-weight: 600; margin-bottom: .3rem; }
  input, select { font: inherit; padding: .4rem; }
  table { width: 100%; border-collapse: collapse; margin-top: 1rem; } th, td { text-align: left; padding: .4rem; border-bottom: 1px solid #e3e6ea; }
  .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .total { font-size: 1.2rem; font-weight: 700; }
  h2 { font-size: 1.15rem; margin-top: 1.8rem; }
  ul.plans { list-style: none; padding: 0; }
  details.danger { margin-top: 2rem; color: #4a5260; } details.danger summary { cursor: pointer; }
`;

/** The pages' one inline style (the text between the tags, exactly: its hash allows it). */
const STYLE_TAG = new Html(`<style>${STYLE}</style>`);

/**
 * The security headers of every page: nothing but their inline style (by hash), no script, no
 * frame, no `<base>`, no sniffing, and no referrer (their addresses carry tokens and session ids).
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = pageSecurityHeaders({ styles: [cspHash(STYLE)], secretUrl: true });

export function page(title: string, body: Html): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Tollgate sandbox</title>
        ${STYLE_TAG}
      </head>
      <body>
        <main>
          <p class="badge" role="note">Sandbox: no real payment is taken</p>
          ${body}
        </main>
      </body>
    </html> `.text;
}
