import type { Clock, EventQueue, IdGenerator, PaymentProvider, Signer, UnitOfWork } from '../ports';

/** Everything a use case may reach outside the domain, injected by a composition root. */
export interface CoreDeps {
  uow: UnitOfWork;
  clock: Clock;
  ids: IdGenerator;
  payments: PaymentProvider;
  signer: Signer;
  events: EventQueue;
  /** Hosted checkout for free plans, which need no payment provider (default: `payments`). */
  freeCheckout?: Pick<PaymentProvider, 'name' | 'checkoutLink' | 'purchaseCompleted' | 'renewedBySweep'>;
}
