import { DomainError, ErrorCodes, type CheckoutLinkRequest } from '@tollgate/core';
import { checkoutOptionsInput, parseExpandList } from '@tollgate/http';
import { Expand } from './views';
import type { PlanLinkOptions } from './links';

export const EXPANDABLE = {
  product: [
    'generateCheckoutLinks',
    'features',
    'features.featureEnumOptions',
    'capabilities',
    'currencies',
    'currencies.currency',
    'organisationPaymentIntegration',
    'plans',
    'plans.capabilities',
    'plans.features',
    'plans.features.feature',
    'plans.features.enumValue',
    'plans.currencies',
    'plans.currencies.currency',
  ],
  plan: [
    'capabilities',
    'capabilities.capability',
    'features',
    'features.feature',
    'features.enumValue',
    'currencies',
    'currencies.currency',
    'generateCheckoutLink',
  ],
  subscription: ['product', 'product.organisationPaymentIntegration', 'product.currencies', 'plan.currencies', 'customer'],
} as const;

/** `expand=a,b` (or `[a,b]`): exactly the allowed values; an unknown one is named in a 400. */
export const parseExpand = (raw: unknown, resource: keyof typeof EXPANDABLE): Expand =>
  new Expand(parseExpandList(raw, EXPANDABLE[resource]));

type Query = Record<string, string | undefined>;

/**
 * A URL parameter as real clients send it: some wrap the value in one pair of single quotes
 * (`'https://example.com/'`), which is read as the quoted value.
 */
export const unquoted = (v: string | undefined): string | undefined =>
  v !== undefined && v.length >= 2 && v.startsWith("'") && v.endsWith("'") ? v.slice(1, -1) : v;

/**
 * A checkout request from query strings: the option set typed, the rest as given. `owner` is read
 * as `member` (the real clients' name for it); `member` wins when both are sent. Core requires one.
 */
export const linkRequest = (q: Query): CheckoutLinkRequest => ({
  ...checkoutOptionsInput(q),
  successUrl: unquoted(q.successUrl),
  cancelUrl: unquoted(q.cancelUrl),
  granteeId: q.granteeId,
  member: q.member ?? q.owner,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One per-plan list of the real clients' pricing tables: `[planUuid,value,planUuid,value]` (their
 * arrays of `planUuid,value` pairs as text, brackets optional). A value runs up to the next plan
 * UUID, so a URL may hold commas. 400 naming the parameter when it does not start with a plan UUID
 * or a plan has no value.
 */
export function parsePerPlan(name: string, raw: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (raw === undefined || raw.trim() === '' || raw.trim() === '[]') return out;
  const tokens = raw
    .trim()
    .replace(/^\[|\]$/g, '')
    .split(',');
  let plan: string | undefined;
  let value: string[] = [];
  const flush = () => {
    if (plan === undefined) return;
    const v = unquoted(value.join(',').trim());
    if (!v) invalidParam(name, `gives no value for plan ${plan}`);
    out.set(plan.toLowerCase(), v as string);
  };
  for (const token of tokens) {
    const t = token.trim();
    if (UUID.test(t) && (plan === undefined || value.length > 0)) {
      flush();
      plan = t;
      value = [];
    } else if (plan === undefined) invalidParam(name, 'must be a list of planUuid,value pairs');
    else value.push(token);
  }
  flush();
  return out;
}

const invalidParam = (property: string, error: string): never => {
  throw new DomainError(ErrorCodes.VALIDATION_FAILED, `${property} ${error}`, [{ property, error }]);
};

/** The per-plan grantees, success and cancel addresses of a pricing table request, by plan. */
export function perPlanOptions(q: Query): Map<string, PlanLinkOptions> {
  const out = new Map<string, PlanLinkOptions>();
  const put = (name: string, field: keyof PlanLinkOptions) => {
    for (const [plan, v] of parsePerPlan(name, q[name])) out.set(plan, { ...out.get(plan), [field]: v });
  };
  put('granteeIds', 'granteeId');
  put('successUrls', 'successUrl');
  put('cancelUrls', 'cancelUrl');
  return out;
}

/** `member` (or `owner`), where the contract requires it (a pricing table): 400 naming `member` when neither is sent. */
export function requireMember(q: Query): void {
  if (!(q.member ?? q.owner))
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, 'member is required', [{ property: 'member', error: 'is required' }]);
}

/** The checkout request each plan of a pricing table gets from its global parameters. */
export const fromGlobal = (q: Query): CheckoutLinkRequest => {
  const { globalSuccessUrl, globalCancelUrl, globalGranteeId, member, granteeIds: _g, successUrls: _s, cancelUrls: _c, ...options } = q;
  void [_g, _s, _c];
  return linkRequest({
    ...options,
    successUrl: globalSuccessUrl,
    cancelUrl: globalCancelUrl,
    granteeId: globalGranteeId,
    member: member ?? options.owner ?? globalGranteeId,
  });
};

/** A `version` header other than v1 is 400; none is fine (the real service's clients send none). */
export function assertVersion(value: string | undefined): void {
  if (value !== undefined && value !== 'v1') {
    throw new DomainError(ErrorCodes.VALIDATION_FAILED, `unsupported version ${value}: the only version is v1`, [
      { property: 'version', error: 'must be v1' },
    ]);
  }
}
