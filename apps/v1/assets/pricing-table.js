// <tollgate-pricing-table src="https://billing.example.com/pricing-tables/<uuid>/page?token=...">
// A web component for the vendor's own site: shows a Tollgate pricing table from a signed pricing
// page link (GET /pricing-tables/:uuid/page-link) in its shadow root. The markup and its styles are
// rendered by Tollgate (the same as the hosted page); currency links reload the table in place and
// the plan buttons lead the whole window to checkout. Load it with
//   <script type="module" src="https://billing.example.com/embed/pricing-table.js"></script>
class TollgatePricingTable extends HTMLElement {
  static observedAttributes = ['src'];

  constructor() {
    super();
    this.attachShadow({ mode: 'open' });
    this.shadowRoot.addEventListener('click', (event) => {
      const link = event.target instanceof Element ? event.target.closest('a[data-currency]') : null;
      if (!link) return;
      event.preventDefault();
      this.load(link.getAttribute('href'));
    });
  }

  connectedCallback() {
    this.load(this.getAttribute('src'));
  }

  attributeChangedCallback(_name, before, after) {
    if (this.isConnected && before !== null && before !== after) this.load(after);
  }

  async load(src) {
    if (!src) return;
    const url = new URL(src, document.baseURI);
    url.searchParams.set('format', 'fragment');
    this.setAttribute('aria-busy', 'true');
    try {
      const res = await fetch(url, { credentials: 'omit' });
      this.shadowRoot.innerHTML = await res.text();
      this.dispatchEvent(new CustomEvent(res.ok ? 'tollgate-loaded' : 'tollgate-error', { detail: { status: res.status } }));
    } catch (error) {
      this.shadowRoot.innerHTML = '<p role="alert">The pricing table could not be loaded. Please try again later.</p>';
      this.dispatchEvent(new CustomEvent('tollgate-error', { detail: { error: String(error) } }));
    } finally {
      this.removeAttribute('aria-busy');
    }
  }
}

if (!customElements.get('tollgate-pricing-table')) customElements.define('tollgate-pricing-table', TollgatePricingTable);
