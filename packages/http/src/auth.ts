import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ErrorCodes, DomainError, hasScope, type ApiKey, type ApiKeyService, type ScopeResource, type Tenant } from '@tollgate/core';

export interface AuthContext {
  key: ApiKey;
  tenant: Tenant;
}

/** Where a generation reads the key: `x-api-key` (legacy, v1) or `Authorization: Bearer` (catalog). */
export type KeySource = 'x-api-key' | 'bearer';

function presentedKey(req: Request, source: KeySource): string | undefined {
  if (source === 'x-api-key') {
    const v = req.header('x-api-key');
    return v?.trim() || undefined;
  }
  const m = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '');
  return m?.[1].trim() || undefined;
}

/** 401 for a missing, unknown or revoked key; otherwise the key's organisation and mode. */
export function authenticate(apiKeys: ApiKeyService, source: KeySource): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = await apiKeys.authenticate(presentedKey(req, source));
    res.locals.auth = { key, tenant: { organisationId: key.organisationId, isTest: key.isTest } } satisfies AuthContext;
    next();
  };
}

/** 403 unless the key has the scope. */
export function requireScope(resource: ScopeResource, access: 'read' | 'write'): RequestHandler {
  return (_req, res, next) => {
    const auth = res.locals.auth as AuthContext | undefined;
    if (!auth) throw new DomainError(ErrorCodes.UNAUTHENTICATED, 'an API key is required');
    if (!hasScope(auth.key, resource, access))
      throw new DomainError(ErrorCodes.FORBIDDEN, `the API key lacks the scope ${resource}:${access}`);
    next();
  };
}

export const tenantOf = (res: Response): Tenant => (res.locals.auth as AuthContext).tenant;
