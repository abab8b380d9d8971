import type { LedgerEntry } from '../../model';
import type { Logger, PaymentProvider, UnitOfWork } from '../../ports';
import type { BalanceTarget } from './group-commit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Stripe meter events as usage is recorded: after a batch committed, the units it used are sent
 * (one event per batch of a balance, its first entry's id as the identifier) when the owner is a
 * subscription billed by the provider. Best effort, off the callers' path: a failure is logged
 * (docs/usage.md says what that means for billing).
 */
export class MeterEventReporter {
  /** The provider customer of an owner that is a subscription billed by the provider (null: none). */
  private readonly customers = new Map<string, string | null>();

  constructor(private readonly deps: { uow: UnitOfWork; payments: Pick<PaymentProvider, 'name' | 'meterEvents'>; logger?: Logger }) {}

  committed(target: BalanceTarget, entries: LedgerEntry[]): void {
    const used = entries.filter((e) => e.usedDelta > 0n && (e.kind === 'record' || e.kind === 'consume' || e.kind === 'commit'));
    if (used.length === 0) return;
    const value = used.reduce((n, e) => n + e.usedDelta, 0n);
    void this.customer(target.owner)
      .then((customerId) =>
        customerId
          ? this.deps.payments.meterEvents?.([
              { eventName: target.meter.slug, customerId, value: String(value), identifier: used[0].id, timestamp: used[0].createdAt },
            ])
          : undefined,
      )
      .catch((e: unknown) =>
        this.deps.logger?.error('usage meter event failed', { owner: target.owner, meter: target.meter.slug, error: String(e) }),
      );
  }

  private async customer(owner: string): Promise<string | null> {
    const known = this.customers.get(owner);
    if (known !== undefined) return known;
    const provider = this.deps.payments.name;
    const found = UUID.test(owner)
      ? await this.deps.uow.read(async (r) => {
          const s = await r.subscriptions.get(owner);
          if (!s || s.paymentProvider !== provider) return null;
          return (await r.customers.get(s.customerId))?.paymentCustomerId ?? null;
        })
      : null;
    if (this.customers.size > 10_000) this.customers.clear();
    this.customers.set(owner, found);
    return found;
  }
}
