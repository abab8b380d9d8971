import express, { type Express } from 'express';
import type { Container } from 'inversify';
import type { ApiKeyService, CatalogQueries, LicenseService } from '@tollgate/core';
import {
  authenticate, compile, errorHandler, legacyErrorBody, LEGACY_V1_STATUS, legacyFeatureWithOptions, legacyPlan, legacyPlanFeature, legacyProduct,
  licenseView, capabilityCheckHandler, requireScope, sendJson, tenantOf, type Logger,
} from '@tollgate/http';
import { TOKENS, wrapApp } from '@tollgate/runtime';

const uuidParam = compile<{ uuid: string }>({
  type: 'object', properties: { uuid: { type: 'string', format: 'uuid' } }, required: ['uuid'],
});

const licenseRequest = {
  type: 'object',
  properties: {
    planUuid: { type: 'string', format: 'uuid' },
    member: { type: 'string', minLength: 1, maxLength: 320 },
    granteeId: { type: ['string', 'null'], minLength: 1, maxLength: 320 },
  },
  required: ['planUuid', 'member', 'granteeId'],
  additionalProperties: false,
};
const createLicensesBody = compile<unknown>({ anyOf: [licenseRequest, { type: 'array', minItems: 1, maxItems: 100, items: licenseRequest }] });
type LicenseRequest = { planUuid: string; member: string; granteeId: string | null };

/** The legacy generation: seven operations over products, plans, features and licenses. */
export function createLegacyRouter(container: Container): express.Router {
  const apiKeys = container.get<ApiKeyService>(TOKENS.ApiKeys);
  const queries = container.get<CatalogQueries>(TOKENS.CatalogQueries);
  const licenses = container.get<LicenseService>(TOKENS.Licenses);
  const r = express.Router();
  r.use(authenticate(apiKeys, 'x-api-key'));

  r.get('/products', requireScope('products', 'read'), async (_req, res) => {
    sendJson(res, 200, (await queries.listProducts(tenantOf(res))).map(legacyProduct));
  });

  r.get('/products/:uuid/plans', requireScope('plans', 'read'), async (req, res) => {
    const { uuid } = uuidParam(req.params);
    sendJson(res, 200, (await queries.listPlans(tenantOf(res), uuid)).map(legacyPlan));
  });

  r.get('/products/:uuid/features', requireScope('products', 'read'), async (req, res) => {
    const { uuid } = uuidParam(req.params);
    sendJson(res, 200, (await queries.productFeatures(tenantOf(res), uuid)).map(legacyFeatureWithOptions));
  });

  r.get('/plans/:uuid/features', requireScope('plans', 'read'), async (req, res) => {
    const { uuid } = uuidParam(req.params);
    sendJson(res, 200, (await queries.planFeatures(tenantOf(res), uuid)).map((v) => legacyPlanFeature(uuid, v)));
  });

  r.get('/licenses/check', requireScope('licenses', 'read'), capabilityCheckHandler(licenses));

  r.post('/licenses', requireScope('licenses', 'write'), async (req, res) => {
    const body = createLicensesBody(req.body) as LicenseRequest | LicenseRequest[];
    const list = Array.isArray(body) ? body : [body];
    const created = await licenses.createAdHoc(tenantOf(res), list);
    const caps = await licenses.capabilitiesOf(created);
    const views = created.map((l) => licenseView(l, caps.get(l.planId) ?? []));
    sendJson(res, 201, Array.isArray(body) ? views : views[0]);
  });

  return r;
}

/** The legacy app alone: its router, a 404 in its error shape, and its error table. */
export function createLegacyApp(container: Container): Express {
  const logger = container.get<Logger>(TOKENS.Logger);
  return wrapApp(container, (app) => {
    app.use(createLegacyRouter(container));
    app.use((_req, res) => sendJson(res, 404, legacyErrorBody({ status: 404, code: 'ROUTE_NOT_FOUND', message: 'no such operation', details: [] })));
    app.use(errorHandler(LEGACY_V1_STATUS, legacyErrorBody, logger));
  });
}
