/**
 * The published catalog operations lane catalog-a serves (issue #20): entitlements (records),
 * subscriptions, subscription plans and their line items, owners, grantees and groups, by their published number (docs/reference/published-catalog-api.md).
 * The lead assembles the all-operations test from each lane's table.
 */
export interface PublishedOperation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  operationId: string;
}

export const peopleOperations: PublishedOperation[] = [
  { method: 'GET', path: '/api/entitlements', operationId: 'listEntitlements' }, // 23
  { method: 'POST', path: '/api/entitlements', operationId: 'createEntitlement' }, // 24
  { method: 'GET', path: '/api/entitlements/{id}', operationId: 'retrieveEntitlement' }, // 26
  { method: 'PUT', path: '/api/entitlements/{id}', operationId: 'updateEntitlement' }, // 27
  { method: 'DELETE', path: '/api/entitlements/{id}', operationId: 'deleteEntitlement' }, // 28
  { method: 'GET', path: '/api/grantees', operationId: 'listGrantees' }, // 33
  { method: 'POST', path: '/api/grantees', operationId: 'createGrantee' }, // 34
  { method: 'GET', path: '/api/grantees/{id}', operationId: 'retrieveGrantee' }, // 35
  { method: 'PUT', path: '/api/grantees/{id}', operationId: 'updateGrantee' }, // 36
  { method: 'DELETE', path: '/api/grantees/{id}', operationId: 'deleteGrantee' }, // 37
  { method: 'GET', path: '/api/groups', operationId: 'listGroups' }, // 38
  { method: 'POST', path: '/api/groups', operationId: 'createGroup' }, // 39
  { method: 'GET', path: '/api/groups/{id}', operationId: 'retrieveGroup' }, // 40
  { method: 'PUT', path: '/api/groups/{id}', operationId: 'updateGroup' }, // 41
  { method: 'DELETE', path: '/api/groups/{id}', operationId: 'deleteGroup' }, // 42
  { method: 'POST', path: '/api/groups/{id}/grantees', operationId: 'manageGrantees' }, // 43
  { method: 'GET', path: '/api/owners', operationId: 'listOwners' }, // 52
  { method: 'DELETE', path: '/api/owners/{id}', operationId: 'deleteOwner' }, // 53
  { method: 'GET', path: '/api/owners/{id}', operationId: 'retrieveOwner' }, // 54
  { method: 'PUT', path: '/api/owners/{id}', operationId: 'updateOwner' }, // 55
  { method: 'PUT', path: '/api/subscription-plan-line-items/{id}', operationId: 'updateSubscriptionPlanLineItem' }, // 84
  { method: 'GET', path: '/api/subscription-plan-line-items/{id}', operationId: 'getSubscriptionPlanLineItem' }, // 85
  { method: 'PUT', path: '/api/subscription-plan-line-items/{id}/sync', operationId: 'syncSubscriptionPlanLineItemPrice' }, // 86
  { method: 'GET', path: '/api/subscription-plans', operationId: 'listSubscriptionPlans' }, // 87
  { method: 'GET', path: '/api/subscription-plans/{id}', operationId: 'retrieveSubscriptionPlan' }, // 88
  { method: 'PUT', path: '/api/subscription-plans/{id}/seats', operationId: 'updateSubscriptionPlanSeats' }, // 89
  { method: 'GET', path: '/api/subscriptions', operationId: 'listSubscriptions' }, // 90
  { method: 'POST', path: '/api/subscriptions', operationId: 'createSalableOnlySubscription' }, // 91
  { method: 'POST', path: '/api/subscriptions/batch', operationId: 'batchSubscriptionActions' }, // 92
  { method: 'GET', path: '/api/subscriptions/{id}', operationId: 'retrieveSubscription' }, // 93
  { method: 'DELETE', path: '/api/subscriptions/{id}', operationId: 'deleteSubscription' }, // 94
  { method: 'PUT', path: '/api/subscriptions/{id}/auto-renew', operationId: 'updateSubscriptionAutoRenew' }, // 95
  { method: 'POST', path: '/api/subscriptions/{id}/cancel', operationId: 'cancelSubscription' }, // 96
  { method: 'GET', path: '/api/subscriptions/{id}/invoices', operationId: 'listSubscriptionInvoices' }, // 97
  { method: 'PUT', path: '/api/subscriptions/{id}/items', operationId: 'updateSubscriptionItems' }, // 98
  { method: 'POST', path: '/api/subscriptions/{id}/portal', operationId: 'createSubscriptionPortal' }, // 99
];
