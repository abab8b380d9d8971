import type { Feature, PlanFeatureView } from '@tollgate/core';
import { enumOptionView, legacyFeature, planFeatureBase } from '@tollgate/http';

/** Legacy's own views (the shapes v1 shares are in @tollgate/http). */

export const legacyFeatureWithOptions = (f: Feature) => ({ ...legacyFeature(f), featureEnumOptions: f.enumOptions.map(enumOptionView) });

export const legacyPlanFeature = (planId: string, v: PlanFeatureView) => ({
  ...planFeatureBase(planId, v),
  feature: legacyFeature(v.feature),
  enumValue: v.enumOption ? enumOptionView(v.enumOption) : null,
});
