import type { IncomingMessage } from 'node:http';
import { hashApiKey } from '@tollgate/core';
import { createRateLimits } from '../src';

// The failed-authentication budget without a server: addresses and keys as the limiter sees them.
const from = (address: string, key?: string) =>
  ({ headers: key ? { 'x-api-key': key } : {}, socket: { remoteAddress: address } }) as unknown as IncomingMessage;

/** Runs the middleware for one request that ends with `status` (and authenticated when 200). */
async function answer(limits: ReturnType<typeof createRateLimits>, req: IncomingMessage, status: number): Promise<unknown> {
  const listeners: (() => void)[] = [];
  const res = {
    statusCode: status,
    locals: status === 200 ? { auth: {} } : {},
    setHeader: () => undefined,
    on: (_event: string, fn: () => void) => listeners.push(fn),
  };
  let refused: unknown;
  await new Promise<void>((done) =>
    limits.authFailures(req as never, res as never, (e?: unknown) => {
      refused = e;
      done();
    }),
  );
  if (!refused) listeners.forEach((l) => l());
  return refused;
}

const budget = { enabled: true, authFailuresPerMinute: 5, writesPerMinute: 100 };

it('counts failures only once they are answered: requests in flight and successes never count', async () => {
  const limits = createRateLimits(budget);
  // Many requests in flight at once from one address: none is refused, whatever their number.
  for (let i = 0; i < 50; i++) expect(limits.authRefusal(from('203.0.113.9', `live_${i}`), hashApiKey(`live_${i}`))).toBeNull();
  for (let i = 0; i < 50; i++) expect(await answer(limits, from('203.0.113.9', 'live_good'), 200)).toBeUndefined();
  expect(limits.authRefusal(from('203.0.113.9', 'live_other'), hashApiKey('live_other'))).toBeNull();
});

it('refuses an address past its budget for keys it has not seen authenticate, never for those it has', async () => {
  const limits = createRateLimits(budget);
  expect(await answer(limits, from('198.51.100.7', 'live_good'), 200)).toBeUndefined();
  for (let i = 0; i < 5; i++) expect(await answer(limits, from('198.51.100.7', `live_bad${i}`), 401)).toBeUndefined();
  expect(limits.authRefusal(from('198.51.100.7', 'live_guess'), hashApiKey('live_guess'))).toMatchObject({
    reason: 'too many failed authentications from this address',
  });
  expect(limits.authRefusal(from('198.51.100.7'), undefined)).not.toBeNull();
  // The vendor's backend behind the same address keeps working.
  for (let i = 0; i < 40; i++) expect(await answer(limits, from('198.51.100.7', 'live_good'), 200)).toBeUndefined();
  // Another address is untouched.
  expect(limits.authRefusal(from('198.51.100.8', 'live_guess'), hashApiKey('live_guess'))).toBeNull();
});

it('limits a presented key by its own failures, from any address', async () => {
  const limits = createRateLimits(budget);
  for (let i = 0; i < 5; i++) await answer(limits, from(`192.0.2.${i + 1}`, 'live_revoked'), 401);
  const refusal = limits.authRefusal(from('192.0.2.99', 'live_revoked'), hashApiKey('live_revoked'));
  expect(refusal).toMatchObject({ reason: 'too many failed authentications with this API key' });
  expect(refusal?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(refusal?.retryAfterSeconds).toBeLessThanOrEqual(60);
  expect(limits.authRefusal(from('192.0.2.99', 'live_good'), hashApiKey('live_good'))).toBeNull();
});

it('has an off switch', () => {
  const limits = createRateLimits({ ...budget, enabled: false });
  expect(limits.authRefusal(from('192.0.2.1', 'x'), hashApiKey('x'))).toBeNull();
});
