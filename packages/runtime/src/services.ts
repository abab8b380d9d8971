import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCodes, type Clock, type EventQueue, type IdGenerator, type PaymentProvider } from '@tollgate/core';

export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
}

export class UuidGenerator implements IdGenerator {
  newId(): string {
    return randomUUID();
  }
}

/** Wakes the in-process worker loop; several instances also poll, so a lost wake only delays. */
export class WakeSignal implements EventQueue {
  private listener: (() => void) | undefined;
  onWake(listener: () => void): void {
    this.listener = listener;
  }
  wake(): void {
    this.listener?.();
  }
}

/** Stands in until a payment adapter is configured: every call is refused clearly. */
export class NoPaymentProvider implements PaymentProvider {
  readonly name = 'none';
  private refuse(): never {
    throw new DomainError(ErrorCodes.PAYMENT_NOT_AVAILABLE, 'no payment provider is configured');
  }
  checkoutLink = async () => this.refuse();
  updatePaymentLink = async () => this.refuse();
  portalLink = async () => this.refuse();
  cancelLink = async () => this.refuse();
  purchaseCompleted = async () => this.refuse();
  changePlan = async () => this.refuse();
  changeSeats = async () => this.refuse();
  cancel = async () => this.refuse();
  reactivate = async () => this.refuse();
  listInvoices = async () => this.refuse();
  paymentMethod = async () => this.refuse();
}
