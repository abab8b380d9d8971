import { BUSY_RETRY_AFTER_SECONDS, DATABASE_RETRY_AFTER_SECONDS, DomainError, ErrorCodes } from '@tollgate/core';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import request from 'supertest';
import { createV1App } from '../src';
import { v1 } from './helpers';

// The hosted pricing page in an outage: 503 with the APIs' Retry-After, a page saying to try again
// shortly, nothing logged as an error (as the sandbox's pages answer one).

const errors: { message: string; fields?: Record<string, unknown> }[] = [];
const logger = {
  info: () => undefined,
  error: (message: string, fields?: Record<string, unknown>) => void errors.push({ message, fields }),
};
let world: TestWorld;
let app: ReturnType<typeof createV1App>;
let org: SeededOrg;

beforeAll(async () => {
  world = await createTestWorld({ logger });
  app = createV1App(world);
  org = await seedOrganisation(world, 'pricing-page-org');
});
afterAll(() => world?.close());
beforeEach(() => void (errors.length = 0));
afterEach(() => jest.restoreAllMocks());

const globalParams =
  'globalSuccessUrl=https://app.example.com/ok&globalCancelUrl=https://app.example.com/cancel&globalGranteeId=alice&member=m@example.com';

async function pagePath(): Promise<string> {
  const { body } = await v1(app, org.liveKey)
    .get(`/pricing-tables/${org.keys['pricingTables.notes.main']}/page-link?${globalParams}`)
    .expect(200);
  const url = new URL(body.url);
  return `${url.pathname}${url.search}`;
}

describe('the hosted pricing page in an outage', () => {
  it.each([
    [ErrorCodes.DATABASE_UNAVAILABLE, DATABASE_RETRY_AFTER_SECONDS],
    [ErrorCodes.BUSY, BUSY_RETRY_AFTER_SECONDS],
  ])('answers %s 503 with Retry-After, the page and its fragment, not logged as an error', async (code, seconds) => {
    const path = await pagePath();
    await request(app).get(path).expect(200);
    jest.spyOn(world.core.queries, 'getPricingTable').mockRejectedValue(new DomainError(code, 'the database is unavailable'));
    const page = await request(app).get(path).expect(503);
    expect(page.headers['retry-after']).toBe(String(seconds));
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toMatch(/try again/i);
    expect(page.text).not.toMatch(/\bat \w|node_modules|DomainError/);
    const fragment = await request(app).get(`${path}&format=fragment`).expect(503);
    expect(fragment.headers['retry-after']).toBe(String(seconds));
    expect(fragment.text).toMatch(/^<p role="alert">[^<]*try again/i);
    expect(errors).toEqual([]);
  });

  it('still answers a plan that changed since the link 409 and a fault 500, logged once', async () => {
    const path = await pagePath();
    const spy = jest.spyOn(world.core.queries, 'getPricingTable');
    spy.mockRejectedValueOnce(new DomainError(ErrorCodes.PLAN_ARCHIVED, 'archived'));
    await request(app).get(path).expect(409);
    spy.mockRejectedValueOnce(new Error('a bug'));
    const res = await request(app).get(path).expect(500);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});
