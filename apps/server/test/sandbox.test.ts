import request from 'supertest';
import { invoiceListSchema, paymentMethodSchema } from '@tollgate/app-v1';
import { ajv } from '@tollgate/http';
import { createTestWorld, seedOrganisation, type SeededOrg, type TestWorld } from '@tollgate/runtime/testing';
import { createServerApp } from '../src';

let world: TestWorld;
let org: SeededOrg;
let app: ReturnType<typeof createServerApp>;

beforeAll(async () => {
  world = await createTestWorld();
  org = await seedOrganisation(world, 'sandbox-org');
  app = createServerApp(world);
});
afterAll(() => world?.close());

const v1 = (method: 'get' | 'put' | 'post', path: string) => request(app)[method](path).set('x-api-key', org.liveKey).set('version', 'v1');
const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
function expectSchema(schema: object, body: unknown) {
  const validate = ajv.compile(schema);
  if (!validate(body)) throw new Error(ajv.errorsText(validate.errors));
}
const link = (plan: string, grantee: string, extra = '') =>
  v1(
    'get',
    `/plans/${plan}/checkoutlink?successUrl=https://vendor.example.com/thanks&cancelUrl=https://vendor.example.com/pricing&granteeId=${grantee}&member=buyer@example.com${extra}`,
  );

describe("the sandbox's checkout pages", () => {
  it("neither show, pay nor cancel another provider's session (a Stripe one paid here would be a subscription nobody paid for)", async () => {
    const { body } = await link(org.keys['plans.notes.team'], 'stripe-buyer').expect(200);
    const id = pathOf(body.checkoutUrl).split('/').pop() as string;
    // The session as a Stripe instance records it (the pages are mounted beside Stripe for free plans).
    await world.db.uow.run(async (r) => {
      const s = await r.checkoutSessions.get(id);
      if (s) await r.checkoutSessions.save({ ...s, provider: 'stripe' });
    });
    await request(app).get(`/sandbox/checkout/${id}`).expect(404);
    await request(app).post(`/sandbox/checkout/${id}/pay`).type('form').send({}).expect(404);
    await request(app).post(`/sandbox/checkout/${id}/cancel`).type('form').send({}).expect(404);
    expect((await world.db.uow.run((r) => r.checkoutSessions.get(id)))?.status).toBe('open');
    const licenses = (await v1('get', '/licenses').expect(200)).body.filter((l: { granteeId: string }) => l.granteeId === 'stripe-buyer');
    expect(licenses).toEqual([]);
  });
});

describe('sandbox purchase end to end over HTTP', () => {
  it('link -> page -> pay -> subscription and licenses -> check -> invoices -> portal cancel at period end', async () => {
    const { body } = await link(org.keys['plans.notes.team'], 'alice', '&changeQuantity=true&customerEmail=buyer@example.com').expect(200);
    expect(body.checkoutUrl).toMatch(/^http:\/\/localhost:3000\/sandbox\/checkout\/[0-9a-f-]{36}$/);
    const checkoutPath = pathOf(body.checkoutUrl);

    const pageRes = await request(app).get(checkoutPath).expect(200);
    expect(pageRes.headers['content-type']).toMatch(/text\/html/);
    expect(pageRes.text).toContain('<html lang="en">');
    expect(pageRes.text).toMatch(/id="plan">Team</);
    expect(pageRes.text).toContain('$12.00 per seat per month');
    expect(pageRes.text).toMatch(/id="grantee">alice</);
    expect(pageRes.text).toMatch(/<label for="quantity">Seats<\/label>/);

    const paid = await request(app).post(`${checkoutPath}/pay`).type('form').send({ quantity: '3' }).expect(303);
    expect(paid.headers.location).toBe('https://vendor.example.com/thanks');
    await request(app).post(`${checkoutPath}/pay`).type('form').send({}).expect(409);

    const check = await v1('get', `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=alice`).expect(200);
    expect(check.body.capabilities).toEqual(['edit', 'export']);
    const licenses = (await v1('get', '/licenses').expect(200)).body.filter(
      (l: { paymentService: string }) => l.paymentService === 'sandbox',
    );
    expect(licenses).toHaveLength(3);
    const subscriptionId = licenses[0].subscriptionUuid;
    expect((await v1('get', `/subscriptions/${subscriptionId}`).expect(200)).body).toMatchObject({
      quantity: 3,
      status: 'ACTIVE',
      email: 'buyer@example.com',
    });

    const invoices = (await v1('get', `/subscriptions/${subscriptionId}/invoices`).expect(200)).body;
    expectSchema(invoiceListSchema, invoices);
    expect(invoices.data[0]).toMatchObject({ total: 3600, currency: 'usd', status: 'paid', billing_reason: 'subscription_create' });
    expect(invoices.data[0].subscription_details.metadata.granteeId).toBe('alice');
    expectSchema(paymentMethodSchema, (await v1('get', `/subscriptions/${subscriptionId}/payment-method`).expect(200)).body);

    world.clock.advanceDays(10);
    await v1('post', `/subscriptions/${subscriptionId}/seats`).send({ increment: 1, proration: 'always_invoice' }).expect(202);
    await world.core.worker.drain();
    const after = (await v1('get', `/subscriptions/${subscriptionId}/invoices`).expect(200)).body;
    expectSchema(invoiceListSchema, after);
    expect(after.data).toHaveLength(2);
    const proration = after.data[0];
    expect(proration).toMatchObject({ billing_reason: 'subscription_update', status: 'paid' });
    expect(proration.lines.data.map((l: { proration: boolean; quantity: number }) => [l.proration, l.quantity])).toEqual([
      [true, 3],
      [true, 4],
    ]);
    expect(proration.lines.data[0].amount).toBeLessThan(0);
    // A third of a month left at 12.00 a seat: about 3 × 8.00 credited, 4 × 8.00 charged.
    expect(proration.total).toBeGreaterThan(600);
    expect(proration.total).toBeLessThan(1000);

    const portalUrl = (await v1('get', `/subscriptions/${subscriptionId}/customer-portal`).expect(200)).body.url;
    const portal = await request(app).get(pathOf(portalUrl)).expect(200);
    expect(portal.text).toContain('Cancel at period end');
    expect(portal.text).toContain('<th scope="col">Number</th>');
    // The seats form sent twice (a double click, a resubmitted page) asks for one number: no second change.
    const seatsForm = (/action="([^"]+\/seats\?token=[^"]+)"/.exec(portal.text)?.[1] as string).replace(/&amp;/g, '&');
    const seatsBefore = (await v1('get', `/subscriptions/${subscriptionId}`)).body.quantity as number;
    for (let i = 0; i < 2; i++)
      await request(app)
        .post(seatsForm)
        .type('form')
        .send({ quantity: seatsBefore + 2 })
        .expect(303);
    await world.core.worker.drain();
    expect((await v1('get', `/subscriptions/${subscriptionId}`)).body.quantity).toBe(seatsBefore + 2);
    const cancelForm = /action="([^"]+\/cancel\?token=[^"]+)"/.exec(portal.text)?.[1] as string;
    await request(app).post(cancelForm.replace(/&amp;/g, '&')).type('form').send({}).expect(303);
    expect((await v1('get', `/subscriptions/${subscriptionId}`)).body.cancelAtPeriodEnd).toBe(true);
    const again = await request(app).get(pathOf(portalUrl)).expect(200);
    expect(again.text).toContain('Keep my subscription');

    await request(app).get(`/sandbox/portal/${subscriptionId}?token=forged`).expect(403);
    await request(app).post(`/sandbox/portal/${subscriptionId}/reactivate?token=forged`).expect(403);
  });

  it('renews sandbox and free subscriptions at the end of their period, with a cycle invoice for the sandbox', async () => {
    const { body } = await link(org.keys['plans.notes.business'], 'renewer').expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const free = await link(org.keys['plans.notes.free'], 'free-renewer').expect(200);
    await request(app)
      .post(`${pathOf(free.body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const lic = (await v1('get', '/licenses').expect(200)).body.find((l: { granteeId: string }) => l.granteeId === 'renewer');
    const before = (await v1('get', `/subscriptions/${lic.subscriptionUuid}`)).body.expiryDate;
    world.clock.advanceDays(45);
    expect(await world.core.sweeps.renewals()).toBeGreaterThanOrEqual(2);
    const after = (await v1('get', `/subscriptions/${lic.subscriptionUuid}`)).body;
    expect(new Date(after.expiryDate).getTime()).toBeGreaterThan(new Date(before).getTime());
    expect(new Date(after.expiryDate).getTime()).toBeGreaterThan(world.clock.now().getTime());
    await v1('get', `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=renewer,free-renewer`).expect(200);
    const invoices = (await v1('get', `/subscriptions/${lic.subscriptionUuid}/invoices`)).body;
    expectSchema(invoiceListSchema, invoices);
    expect(invoices.data[0]).toMatchObject({ billing_reason: 'subscription_cycle', status: 'paid', total: 3000 });
    expect(await world.core.sweeps.renewals()).toBe(0);
  });

  it('a subscription of several plans: an added plan is charged for the rest of the period, every plan renews on one invoice; v1 shows the first', async () => {
    const { body } = await link(org.keys['plans.notes.team'], 'multi', '&quantity=2').expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const lic = (await v1('get', '/licenses').expect(200)).body.find((l: { granteeId: string }) => l.granteeId === 'multi');
    const id = lic.subscriptionUuid as string;
    world.clock.advanceDays(10);
    await request(app)
      .put(`/api/subscriptions/${id}/items`)
      .set('authorization', `Bearer ${org.liveKey}`)
      .send({ items: [{ planId: org.keys['plans.notes.business'], action: 'add' }], proration: 'always_invoice' })
      .expect(204);
    // v1 shows the subscription's first plan and its seats.
    expect((await v1('get', `/subscriptions/${id}`).expect(200)).body).toMatchObject({
      planUuid: org.keys['plans.notes.team'],
      quantity: 2,
    });
    const charged = (await v1('get', `/subscriptions/${id}/invoices`)).body.data[0];
    expect(charged.lines.data).toHaveLength(1);
    expect(charged.lines.data[0]).toMatchObject({ proration: true, quantity: 1 });
    expect(charged.total).toBeGreaterThan(0);
    expect(charged.total).toBeLessThan(3000);
    world.clock.advanceDays(45);
    expect(await world.core.sweeps.renewals()).toBeGreaterThanOrEqual(1);
    const cycle = (await v1('get', `/subscriptions/${id}/invoices`)).body.data[0];
    expect(cycle).toMatchObject({ billing_reason: 'subscription_cycle', total: 2 * 1200 + 3000 });
    expect(cycle.lines.data.map((l: { quantity: number; amount: number }) => [l.quantity, l.amount])).toEqual([
      [2, 2400],
      [1, 3000],
    ]);
    // sync (#86): the sandbox bills each period at the plan's current price, so nothing moves and nothing is billed.
    const spli = (
      await request(app)
        .get(`/api/subscription-plans/${id}?expand=subscriptionPlanLineItems`)
        .set('authorization', `Bearer ${org.liveKey}`)
        .expect(200)
    ).body.data.subscriptionPlanLineItems.data[0].id;
    await request(app).put(`/api/subscription-plan-line-items/${spli}/sync`).set('authorization', `Bearer ${org.liveKey}`).expect(204);
    expect((await v1('get', `/subscriptions/${id}/invoices`)).body.data[0].id).toBe(cycle.id);
  });

  it('grants a free plan without payment', async () => {
    const { body } = await link(org.keys['plans.notes.free'], 'freddie').expect(200);
    const page = await request(app).get(pathOf(body.checkoutUrl)).expect(200);
    expect(page.text).toContain('Get it free');
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const check = await v1('get', `/licenses/check?productUuid=${org.keys['products.notes']}&granteeIds=freddie`).expect(200);
    expect(check.body.capabilities).toEqual(['edit']);
    const lic = (await v1('get', '/licenses').expect(200)).body.find((l: { granteeId: string }) => l.granteeId === 'freddie');
    expect(lic.paymentService).toBe('none');
  });

  it('sends the customer back to cancelUrl on cancel, refuses quantities the checkout did not allow, and 404s unknown sessions', async () => {
    const { body } = await link(org.keys['plans.notes.team'], 'carl').expect(200);
    const res = await request(app)
      .post(`${pathOf(body.checkoutUrl)}/cancel`)
      .type('form')
      .send({})
      .expect(303);
    expect(res.headers.location).toBe('https://vendor.example.com/pricing');
    // A canceled checkout cannot be paid (hardening finding 8); a fresh one refuses a seat count it did not offer.
    const fresh = (await link(org.keys['plans.notes.team'], 'carl').expect(200)).body;
    const refused = await request(app)
      .post(`${pathOf(fresh.checkoutUrl)}/pay`)
      .type('form')
      .send({ quantity: '9' })
      .expect(400);
    expect(refused.text).toContain('does not let the customer choose');
    await request(app).get('/sandbox/checkout/00000000-0000-4000-8000-000000000000').expect(404);
  });

  it('updates the test card from the update-payment page and cancels from the cancel page', async () => {
    const { body } = await link(org.keys['plans.notes.business'], 'dora').expect(200);
    await request(app)
      .post(`${pathOf(body.checkoutUrl)}/pay`)
      .type('form')
      .send({})
      .expect(303);
    const lic = (await v1('get', '/licenses').expect(200)).body.find((l: { granteeId: string }) => l.granteeId === 'dora');
    const s = lic.subscriptionUuid;
    const pmUrl = (await v1('get', `/subscriptions/${s}/updatepaymentlink`).expect(200)).body.url;
    expect((await request(app).get(pathOf(pmUrl)).expect(200)).text).toContain('visa ending 4242');
    await request(app).post(pathOf(pmUrl)).type('form').send({ card: 'mastercard' }).expect(303);
    expect((await v1('get', `/subscriptions/${s}/payment-method`).expect(200)).body.card.last4).toBe('4444');
    const cancelUrl = (await v1('get', `/subscriptions/${s}/cancelpaymentlink`).expect(200)).body.url;
    expect((await request(app).get(pathOf(cancelUrl)).expect(200)).text).toContain('Cancel your subscription');
    await request(app).post(pathOf(cancelUrl)).type('form').send({}).expect(303);
    const view = await world.core.subscriptions.get(org.tenant, s);
    expect(view.subscription.cancelAtPeriodEnd).toBe(true);
  });
});
