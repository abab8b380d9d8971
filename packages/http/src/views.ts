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

export { capabilityView, licenseView } from '@tollgate/core';
