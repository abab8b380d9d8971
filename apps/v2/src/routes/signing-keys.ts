import { resource, signingKeyRoute } from '@tollgate/http';
import type { RouteModule } from './support';

/**
 * The organisation's public signing key, as v1 serves it (`GET /signing-key`, the same route): it
 * verifies the signature of v2's `/licenses/check` and v3's `/entitlements/check` offline
 * (docs/api/verifying.md). Not an SDK 5 method: a client fetches it itself.
 */
export const signingKeyRoutes: RouteModule = ({ core: { signing } }) =>
  resource({ name: 'signing-keys', description: 'The public key that verifies capability checks offline' }, [
    signingKeyRoute('/signing-key', signing),
  ]);
