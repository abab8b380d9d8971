/** JSON Schemas of legacy's own response bodies (the shared ones are in @tollgate/http). */
import { arrayOf, bool, date, enumOptionSchema, featureProps, legacyFeatureSchema, object, str, uuid } from '@tollgate/http';

export const legacyFeatureWithOptionsSchema = object({ ...featureProps, featureEnumOptions: arrayOf(enumOptionSchema) });

export const legacyPlanFeatureSchema = object({
  planUuid: uuid,
  featureUuid: uuid,
  value: str,
  enumValueUuid: { anyOf: [uuid, { type: 'null' }] },
  isUnlimited: bool,
  updatedAt: date,
  feature: legacyFeatureSchema,
  enumValue: { anyOf: [enumOptionSchema, { type: 'null' }] },
});
