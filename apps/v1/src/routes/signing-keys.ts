import { resource, signingKeyRoute, type Route } from '@tollgate/http';
import type { V1Services } from './support';

/** The organisation's public signing key (docs/api/verifying.md). */
export const signingKeyRoutes = ({ core: { signing } }: V1Services): Route[] =>
  resource({ name: 'signing-keys', description: 'The public key that verifies capability checks offline' }, [
    signingKeyRoute('/signing-key', signing),
  ]);
