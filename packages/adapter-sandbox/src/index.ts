export { SandboxPaymentProvider, SandboxLinks, FreeCheckout, type SandboxConfig, type SandboxPage } from './provider';
export { createSandboxRouter, type SandboxPagesDeps } from './pages';
export { invoiceDocument, testCardDocument } from './documents';
