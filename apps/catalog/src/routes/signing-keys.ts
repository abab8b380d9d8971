import type { Core } from '@tollgate/core';
import { resource, signingKeyRoute, type Route } from '@tollgate/http';

/** The organisation's public signing key (docs/api/verifying.md). */
export const signingKeyRoutes = ({ signing }: Pick<Core, 'signing'>): Route[] =>
  resource({ name: 'signing-keys', description: 'The public key that verifies capability checks offline' }, [
    signingKeyRoute('/api/signing-keys', signing),
  ]);
