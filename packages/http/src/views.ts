import {
  legacyStatus,
  NO_END,
  type EnumOption,
  type Feature,
  type Plan,
  type PlanFeatureView,
  type Product,
  type SignedCheck,
} from '@tollgate/core';
import { iso } from './json';

/** The legacy shapes of the domain records, which v1 extends: exactly the contract's fields. */

export const legacyProduct = (p: Product) => ({
  uuid: p.id,
  name: p.name,
  description: p.description,
  displayName: p.displayName,
  organisation: p.organisationId,
  logoUrl: null,
  status: legacyStatus(p),
  paid: p.paid,
  organisationPaymentIntegrationUuid: p.paymentIntegrationId ?? '',
  paymentIntegrationProductId: p.paymentProductId,
  updatedAt: iso(p.updatedAt),
});

export const legacyPlan = (p: Plan) => ({
  uuid: p.id,
  name: p.name,
  description: p.description,
  displayName: p.displayName,
  organisation: p.organisationId,
  status: legacyStatus(p),
  trialDays: p.trialDays,
  evaluation: p.evaluation,
  evalDays: p.evalDays,
  visibility: p.visibility,
  licenseType: p.licenseType,
  interval: p.interval,
  length: p.length,
  active: p.active,
  planType: p.planType,
  pricingType: p.pricingType,
  environment: p.environment,
  type: p.appKind,
  providerPlanId: p.providerPlanId,
  productUuid: p.productId,
  servicePlan: p.servicePlan,
  updatedAt: iso(p.updatedAt),
});

export const enumOptionView = (o: EnumOption) => ({ uuid: o.id, name: o.name, featureUuid: o.featureId, updatedAt: iso(o.updatedAt) });

export const legacyFeature = (f: Feature) => ({
  uuid: f.id,
  name: f.name,
  description: f.description,
  displayName: f.displayName,
  variableName: f.variableName,
  status: f.status,
  visibility: f.visibility,
  valueType: f.valueType,
  defaultValue: f.defaultValue,
  showUnlimited: f.showUnlimited,
  productUuid: f.productId,
  updatedAt: iso(f.updatedAt),
});

/** The members of a plan feature that every generation shows. */
export const planFeatureBase = (planId: string, v: PlanFeatureView) => ({
  planUuid: planId,
  featureUuid: v.feature.id,
  value: v.value.value,
  enumValueUuid: v.value.enumOptionId,
  isUnlimited: v.value.isUnlimited,
  updatedAt: iso(v.value.updatedAt),
});

export const checkView = (c: SignedCheck) => ({
  capabilities: c.capabilities,
  capabilitiesEndDates: Object.fromEntries(Object.entries(c.capabilitiesEndDates).map(([k, d]) => [k, (d ?? NO_END).toISOString()])),
  publicHash: c.publicHash,
  signature: c.signature,
  capsHashed: c.capsHashed,
});

/** Each capability of a signed check with its latest end (v2 and v3 show them so; v1 as parallel lists). */
export const capabilityEnds = (c: SignedCheck) =>
  c.capabilities.map((name) => ({ name, expiry: (c.capabilitiesEndDates[name] ?? NO_END).toISOString() }));

/**
 * v2's check answer, SDK 5's `CheckLicensesCapabilitiesResponse`: each capability with its latest
 * end, and the (DER) signature. The v2 route and the check's fast path both answer it.
 */
export const v2CheckView = (c: SignedCheck) => ({
  capabilities: capabilityEnds(c).map(({ name, expiry }) => ({ capability: name, expiry })),
  signature: c.signature,
});

/** `v2CheckView` as the text the v2 route sends (`sendJson` writes `JSON.stringify` of it): the fast path's body. */
export const v2CheckBody = (c: SignedCheck): string => JSON.stringify(v2CheckView(c));

/** Slots of the check's ISO-text memo (a power of two). */
const ISO_SLOTS = 4096;
const isoTimes = new Float64Array(ISO_SLOTS).fill(NaN);
const isoTexts: string[] = new Array<string>(ISO_SLOTS).fill('');

/**
 * `d.toISOString()`, remembered by the time it names in a fixed table (`toISOString` is about half
 * a microsecond, and the ends of a check repeat: the licenses of one grantee, one renewal moment, no
 * end). The text is a pure function of the time, so nothing in it can go stale; an invalid date
 * (NaN never equals a slot) throws as `toISOString` does.
 */
function isoText(d: Date): string {
  const t = d.getTime();
  // Fibonacci hashing of the time's two 32-bit halves (ends on whole days differ only in high bits).
  const slot = Math.imul((t | 0) ^ ((t / 4294967296) | 0), 0x9e3779b1) >>> 20;
  if (isoTimes[slot] === t) return isoTexts[slot];
  const text = d.toISOString();
  isoTimes[slot] = t;
  isoTexts[slot] = text;
  return text;
}

/**
 * `JSON.stringify(checkView(c))` built as text, for the check's fast path (which renders every
 * answer it did not render before): no intermediate objects, arrays or entries. The same bytes by
 * construction: every string through `JSON.stringify`, the end dates in the order of the object's
 * own keys (as `Object.entries` gives them, integer-like names first) and as ISO text, which needs
 * no escaping. Anything off the declared types is left to `JSON.stringify(checkView(c))`.
 */
export function checkBody(c: SignedCheck): string {
  const { capabilities, capabilitiesEndDates: ends, publicHash, signature, capsHashed } = c;
  if (typeof publicHash !== 'string' || typeof signature !== 'string' || typeof capsHashed !== 'string')
    return JSON.stringify(checkView(c));
  let s = '{"capabilities":[';
  for (let i = 0; i < capabilities.length; i++) {
    const name = capabilities[i];
    if (typeof name !== 'string') return JSON.stringify(checkView(c));
    s += i === 0 ? JSON.stringify(name) : `,${JSON.stringify(name)}`;
  }
  s += '],"capabilitiesEndDates":{';
  const names = Object.keys(ends);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const end = isoText(ends[name] ?? NO_END);
    s += i === 0 ? `${JSON.stringify(name)}:"${end}"` : `,${JSON.stringify(name)}:"${end}"`;
  }
  return `${s}},"publicHash":${JSON.stringify(publicHash)},"signature":${JSON.stringify(signature)},"capsHashed":${JSON.stringify(capsHashed)}}`;
}

export { capabilityView, licenseView, licenseViews } from '@tollgate/core';
