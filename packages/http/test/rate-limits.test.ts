import type { IncomingMessage } from 'node:http';
import { hashApiKey } from '@tollgate/core';
import { createRateLimits } from '../src';

// The failed-authentication budget without a server: addresses and keys as the limiter sees them.
const from = (address: string, key?: string, headers: Record<string, string> = {}) =>
  ({ headers: { ...headers, ...(key ? { 'x-api-key': key } : {}) }, socket: { remoteAddress: address } }) as unknown as IncomingMessage;

/** Runs the middleware for one request that ends with `status` (and authenticated when 200). */
async function answer(
  limits: ReturnType<typeof createRateLimits>,
  req: IncomingMessage,
  status: number,
  source: 'x-api-key' | 'bearer' = 'x-api-key',
): Promise<unknown> {
  const listeners: (() => void)[] = [];
  const res = {
    statusCode: status,
    locals: status === 200 ? { auth: {} } : {},
    setHeader: () => undefined,
    on: (_event: string, fn: () => void) => listeners.push(fn),
  };
  let refused: unknown;
  await new Promise<void>((done) =>
    limits.authFailures(source)(req as never, res as never, (e?: unknown) => {
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

it("reads only the header its routes authenticate with: the sender's own key in the other one does not cover a guess", async () => {
  const limits = createRateLimits(budget);
  const address = '198.51.100.20';
  // A valid key of the sender's in x-api-key (known good), guesses as Bearer on catalog routes.
  expect(await answer(limits, from(address, 'live_mine'), 200)).toBeUndefined();
  const guess = (n: number) => from(address, 'live_mine', { authorization: `Bearer live_guess${n}` });
  for (let i = 0; i < 5; i++) expect(await answer(limits, guess(i), 401, 'bearer')).toBeUndefined();
  expect(await answer(limits, guess(99), 401, 'bearer')).toMatchObject({ message: expect.stringContaining('from this address') });
  // The v1 routes (x-api-key) still take the sender's own known-good key.
  expect(await answer(limits, from(address, 'live_mine'), 200)).toBeUndefined();
});

it('a busy key stays known good when the map is full: the least recently seen go first', async () => {
  const limits = createRateLimits(budget);
  const address = '198.51.100.30';
  expect(await answer(limits, from(address, 'live_busy'), 200)).toBeUndefined();
  // 100 000 other keys authenticate once each (the map's bound), the busy key now and then among them.
  for (let i = 0; i < 100_000; i++) {
    limits.authSucceeded(hashApiKey(`live_other${i}`));
    if (i % 10_000 === 0) limits.authSucceeded(hashApiKey('live_busy'));
  }
  for (let i = 0; i < 5; i++) await answer(limits, from(address, `live_bad${i}`), 401);
  // Its address is over its budget, but the busy key (seen a moment ago) is still known good.
  expect(limits.authRefusal(from(address, 'live_busy'), hashApiKey('live_busy'))).toBeNull();
  expect(limits.authRefusal(from(address, 'live_other0'), hashApiKey('live_other0'))).not.toBeNull();
});
