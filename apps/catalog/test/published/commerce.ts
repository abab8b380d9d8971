/**
 * The published catalog API's commerce and operations resources (lane catalog-b of issue #20):
 * every operation this lane serves or answers, by method, published path and the operationId it
 * has here: the published one, except where the document gives none (#22 resendDestination, #30
 * resendEventAttempt), reuses one (#110 retrieveWebhookDestination, published retrieveDestination)
 * or misnames one (#9 deleteCartItem, published deleteCart). The all-operations test calls each
 * through the server.
 */
export interface PublishedOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  operationId: string;
  /** Answered 404 on purpose (the hosted dashboard's and assistant's own endpoints, DESIGN section 15). */
  notServed?: true;
}

export const commerceOperations: PublishedOperation[] = [
  { method: 'GET', path: '/api/ai/conversations', operationId: 'listAiConversations', notServed: true },
  { method: 'GET', path: '/api/ai/conversations/{id}', operationId: 'retrieveAiConversation', notServed: true },
  { method: 'GET', path: '/api/ai/messages', operationId: 'listAiMessages', notServed: true },
  { method: 'GET', path: '/api/memberships', operationId: 'listMemberships', notServed: true },
  { method: 'GET', path: '/api/memberships/{id}', operationId: 'retrieveMemberships', notServed: true },
  { method: 'POST', path: '/api/stripe/account-session', operationId: 'createAccountSession', notServed: true },
  { method: 'GET', path: '/api/api-keys', operationId: 'listApiKeys' },
  { method: 'POST', path: '/api/api-keys', operationId: 'createApiKey' },
  { method: 'GET', path: '/api/api-keys/{id}', operationId: 'retrieveApiKey' },
  { method: 'DELETE', path: '/api/api-keys/{id}', operationId: 'deleteApiKey' },
  { method: 'GET', path: '/api/destinations', operationId: 'listDestinations' },
  { method: 'GET', path: '/api/destinations/{id}', operationId: 'retrieveDestination' },
  { method: 'POST', path: '/api/destinations/{id}', operationId: 'resendDestination' },
  { method: 'GET', path: '/api/event-attempts', operationId: 'listEventAttempts' },
  { method: 'POST', path: '/api/event-attempts', operationId: 'resendEventAttempt' },
  { method: 'GET', path: '/api/events', operationId: 'listEvents' },
  { method: 'GET', path: '/api/events/{id}', operationId: 'retrieveEvent' },
  { method: 'POST', path: '/api/webhooks', operationId: 'createWebhookDestination' },
  { method: 'GET', path: '/api/webhooks', operationId: 'listWebhookDestinations' },
  { method: 'DELETE', path: '/api/webhooks/{id}', operationId: 'deleteDestination' },
  { method: 'PATCH', path: '/api/webhooks/{id}', operationId: 'updateDestination' },
  { method: 'GET', path: '/api/webhooks/{id}', operationId: 'retrieveWebhookDestination' },
  { method: 'GET', path: '/api/line-items', operationId: 'listLineItems' },
  { method: 'GET', path: '/api/line-items/{id}', operationId: 'retrieveLineItem' },
  { method: 'PUT', path: '/api/line-items/{id}', operationId: 'updateLineItem' },
  { method: 'DELETE', path: '/api/line-items/{id}', operationId: 'deleteLineItem' },
  { method: 'POST', path: '/api/line-items/{id}/archive', operationId: 'archiveLineItem' },
  { method: 'GET', path: '/api/prices', operationId: 'listPrices' },
  { method: 'GET', path: '/api/prices/{id}', operationId: 'retrievePrice' },
  { method: 'DELETE', path: '/api/prices/{id}', operationId: 'deletePrice' },
  { method: 'POST', path: '/api/prices/{id}/archive', operationId: 'archivePrice' },
  { method: 'GET', path: '/api/currency-options', operationId: 'listCurrencyOptions' },
  { method: 'GET', path: '/api/currency-options/{id}', operationId: 'retrieveCurrencyOption' },
  { method: 'GET', path: '/api/tiers', operationId: 'listTiers' },
  { method: 'GET', path: '/api/tiers/{id}', operationId: 'retrieveTier' },
  { method: 'POST', path: '/api/checkout', operationId: 'generateQuickCheckoutLink' },
  { method: 'GET', path: '/api/receipts', operationId: 'listReceipts' },
  { method: 'GET', path: '/api/receipts/{id}', operationId: 'retrieveReceipt' },
  { method: 'GET', path: '/api/payment-integrations', operationId: 'listPaymentIntegrations' },
  { method: 'POST', path: '/api/payment-integrations', operationId: 'createPaymentIntegration' },
  { method: 'DELETE', path: '/api/payment-integrations/{id}', operationId: 'deletePaymentIntegration' },
  { method: 'POST', path: '/api/payment-integrations/{id}/onboarding', operationId: 'createOnboardingLink' },
  { method: 'POST', path: '/api/products/copy-to-live-mode', operationId: 'copyProductToLiveMode' },
  { method: 'POST', path: '/api/cart-items', operationId: 'createCartItem' },
  { method: 'DELETE', path: '/api/cart-items/{id}', operationId: 'deleteCartItem' },
  { method: 'POST', path: '/api/carts', operationId: 'createCart' },
  { method: 'GET', path: '/api/carts', operationId: 'listCarts' },
  { method: 'POST', path: '/api/carts/batch', operationId: 'batchCartActions' },
  { method: 'GET', path: '/api/carts/{id}', operationId: 'retrieveCart' },
  { method: 'PUT', path: '/api/carts/{id}', operationId: 'updateCart' },
  { method: 'DELETE', path: '/api/carts/{id}', operationId: 'abandonCart' },
  { method: 'POST', path: '/api/carts/{id}/checkout', operationId: 'generateCheckoutLink' },
];
