import fs from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import { html, Html } from '@tollgate/core';
import { cspHash, noSniff, setPageSecurity } from '@tollgate/http';

/** Where the swagger-ui-dist package's files are. */
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'));

/** The server's own version (apps/server/package.json, read from src and from dist alike). */
export const SERVER_VERSION: string = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version;

const STYLE = `
  body { font-family: system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1b1f24; }
  main { max-width: 44rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 12px; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
  h1 { margin-top: 0; } code { background: #eef1f5; padding: .1rem .3rem; border-radius: 4px; }
  li { margin: .3rem 0; } a:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
`;
/** The page's one inline style, allowed by its hash (the text between the tags, exactly). */
const STYLE_TAG = new Html(`<style>${STYLE}</style>`);
const HOME_POLICY = { styles: [cspHash(STYLE)] };

/** What `/docs` loads from swagger-ui-dist, and nothing else of the package (its demo page loads a remote spec). */
const DOCS_ASSETS = new Set(['swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'swagger-ui.css']);
/**
 * The one inline style Swagger UI renders: the `<style>` of its logo (an SVG), allowed by its hash
 * (the browser test `apps/server/test/browser.test.ts` reports a refusal if an upgrade changes it).
 */
const SWAGGER_LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';
/** Swagger UI: its served files, its icons as `data:` images, the OpenAPI documents fetched from here. */
const DOCS_POLICY = {
  scripts: ["'self'"],
  styles: ["'self'", cspHash(SWAGGER_LOGO_STYLE)],
  extra: ["img-src 'self' data:", "connect-src 'self'"],
};

export interface HomeInfo {
  /** 'PostgreSQL server' or 'embedded PGlite'. */
  database: string;
  /** A hosted pricing page of the demo organisation (a fresh install), if there is one. */
  demoPricingPage?: string;
}

/** `GET /`: what runs, its version, and where to go next (a page for people; the APIs stay JSON). */
export function homePage(info: HomeInfo): RequestHandler {
  return (_req, res) => {
    const demo = info.demoPricingPage;
    const body = html`<!doctype html>
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>Tollgate</title>
          ${STYLE_TAG}
        </head>
        <body>
          <main>
            <h1>Tollgate</h1>
            <p>
              Pricing, subscriptions and licensing for software vendors. This is Tollgate <strong id="version">${SERVER_VERSION}</strong>,
              on ${info.database}.
            </p>
            <h2>API</h2>
            <ul>
              <li><a href="/docs">API reference</a> of every generation</li>
              <li>
                OpenAPI documents: <a href="/openapi/legacy.json">legacy</a>, <a href="/openapi/v1.json">v1</a>,
                <a href="/openapi/v2.json">v2</a>, <a href="/openapi/v3.json">v3</a>, <a href="/openapi/catalog.json">catalog</a>
              </li>
              <li>
                legacy, v1, v2 and v3: <code>x-api-key</code> (v1 also <code>version: v1</code>; v2 and v3 <code>version: v2</code> or
                <code>v3</code>, as the real <code>@salable/node-sdk</code> 5 sends); catalog under <code>/api</code> with
                <code>Authorization: Bearer</code>
              </li>
            </ul>
            <h2>Operations</h2>
            <ul>
              <li>
                <a href="/healthz">/healthz</a> (the process answers), <a href="/readyz">/readyz</a> (database, migrations, change feed),
                <a href="/metrics">/metrics</a> (Prometheus)
              </li>
            </ul>
            ${
              demo
                ? html`<h2>Demo</h2>
                    <p>
                      <a id="demo-pricing" href="${demo}">The demo organisation's pricing table</a> (sandbox payments: nothing is charged).
                    </p>`
                : ''
            }
          </main>
        </body>
      </html>`;
    res.status(200);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    setPageSecurity(res, HOME_POLICY);
    res.end(body.text);
  };
}

/**
 * `GET /docs`: an API reference of the three generations rendered from the served OpenAPI documents
 * by Swagger UI, whose files come from the `swagger-ui-dist` package and are served here (no CDN).
 */
export function docsRouter(): express.Router {
  const r = express.Router();
  // `fallthrough` stays true (serve-static's default): a missing file goes on to the next handler,
  // whose 404 answers it. With `fallthrough: false`, send's own 404 would be passed on as an error,
  // and it has `expose: false`: the error handler would answer it as a logged 500.
  const assets = express.static(SWAGGER_UI, { index: false, maxAge: '1h' });
  r.use('/docs/assets', (req, res, next) =>
    DOCS_ASSETS.has(req.path.slice(1)) ? noSniff(req, res, () => assets(req, res, next)) : next(),
  );
  r.get('/docs/init.js', (_req, res) => {
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(`window.ui = SwaggerUIBundle({
  urls: [
    { url: '/openapi/v1.json', name: 'v1' },
    { url: '/openapi/v2.json', name: 'v2' },
    { url: '/openapi/v3.json', name: 'v3' },
    { url: '/openapi/catalog.json', name: 'catalog' },
    { url: '/openapi/legacy.json', name: 'legacy' }
  ],
  'urls.primaryName': 'v1',
  dom_id: '#reference',
  deepLinking: true,
  // One group per resource (the operations' tags), in name order.
  tagsSorter: 'alpha',
  docExpansion: 'list',
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});
`);
  });
  r.get('/docs', (_req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    setPageSecurity(res, DOCS_POLICY);
    res.end(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Tollgate API reference</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`);
  });
  return r;
}
