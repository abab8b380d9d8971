import type { Subscription } from '../../model';
import { NewSeats, seatLicense } from '../../domain/seats';
import { renew, syncWithProvider, type ProviderSnapshot } from '../../domain/subscription';
import type { Repositories } from '../../ports';
import { limitsOf, type CoreDeps } from '../deps';
import { loadCustomer, loadPlan, saveSeats, type WebhookDelivery } from './shared';
import { closeSubscriptionPeriod } from '../usage/periods';

export type SyncResult = 'applied' | 'duplicate' | 'unknown';

/** The payment provider's truth (re-fetched after its webhook) applied to our copy, once per delivery. */
export class ProviderSync {
  constructor(private readonly deps: Pick<CoreDeps, 'uow' | 'clock' | 'ids' | 'limits'>) {}

  /** Status, period, scheduled cancellation and seats as the provider reports them. 'unknown': no such subscription here. */
  async sync(paymentSubscriptionId: string, snapshot: ProviderSnapshot, delivery?: WebhookDelivery): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      const [plan, customer, licenses] = await Promise.all([
        loadPlan(r, s.planId),
        loadCustomer(r, s),
        r.licenses.listBySubscription(s.id),
      ]);
      const newSeats = (sub: Subscription, count: number) =>
        new NewSeats(seatLicense(sub, plan, customer.value, '', now), count, () => this.deps.ids.newId());
      const out = syncWithProvider(s, licenses, snapshot, now, newSeats, limitsOf(this.deps).maxSeats);
      await r.subscriptions.save(out.subscription);
      await r.licenses.deleteMany(out.removed.map((l) => l.id));
      await r.licenses.saveMany(out.saved);
      await saveSeats(r, out.added);
    });
  }

  /** A paid invoice for a new period: the subscription and its licenses run to `periodEnd`. */
  async renew(paymentSubscriptionId: string, periodStart: Date, periodEnd: Date, delivery?: WebhookDelivery): Promise<SyncResult> {
    return this.fromProvider(paymentSubscriptionId, delivery, async (r, s, now) => {
      if (s.status === 'CANCELED' || periodEnd <= s.currentPeriodEnd) return;
      const change = renew(s, await r.licenses.listBySubscription(s.id), periodStart, periodEnd, now);
      await r.subscriptions.save(change.subscription);
      await r.licenses.saveMany(change.licenses);
      // The ended period's usage becomes final (the provider bills it from the meter events it was
      // sent); the next period starts from the allowance plus rollover. Once per period, as in the sweep.
      const plan = await loadPlan(r, s.planId);
      await closeSubscriptionPeriod(r, this.deps.ids, {
        subscription: s,
        plan,
        periodEnd: s.currentPeriodEnd,
        next: { start: periodStart, end: periodEnd, plan, subscription: change.subscription },
        now,
      });
    });
  }

  /** One provider update in one transaction: the delivery recorded once, the subscription locked. */
  private fromProvider(
    paymentSubscriptionId: string,
    delivery: WebhookDelivery | undefined,
    apply: (r: Repositories, s: Subscription, now: Date) => Promise<void>,
  ): Promise<SyncResult> {
    const now = this.deps.clock.now();
    return this.deps.uow.run(async (r) => {
      if (delivery && !(await r.webhookEvents.record(delivery.provider, delivery.eventId, now))) return 'duplicate';
      const found = await r.subscriptions.findByPaymentId(paymentSubscriptionId);
      if (!found) return 'unknown';
      await apply(r, (await r.subscriptions.getForUpdate(found.id)) as Subscription, now);
      return 'applied';
    });
  }
}
