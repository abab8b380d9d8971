import type { Proration } from '../model';

export interface ProrationInput {
  /** Price per unit per period before and after the change, in minor units. */
  fromUnitAmount: number;
  toUnitAmount: number;
  fromQuantity: number;
  toQuantity: number;
  periodStart: Date;
  periodEnd: Date;
  now: Date;
  mode: Proration;
}

export interface ProrationResult {
  /** Credit for the unused part of the old price (zero or negative), minor units. */
  credit: number;
  /** Charge for the rest of the period at the new price (zero or positive), minor units. */
  charge: number;
  /** credit + charge. */
  net: number;
  /** always_invoice: bill now; create_prorations: add to the next invoice; none: nothing. */
  invoiceNow: boolean;
  /** Share of the period still to run, 0..1. */
  remaining: number;
}

/** Time-based proration of a plan or seat change within the current period. */
export function prorate(input: ProrationInput): ProrationResult {
  const span = input.periodEnd.getTime() - input.periodStart.getTime();
  const left = input.periodEnd.getTime() - input.now.getTime();
  const remaining = span <= 0 ? 0 : Math.min(1, Math.max(0, left / span));
  if (input.mode === 'none' || remaining === 0) {
    return { credit: 0, charge: 0, net: 0, invoiceNow: false, remaining };
  }
  const credit = -Math.round(input.fromUnitAmount * input.fromQuantity * remaining);
  const charge = Math.round(input.toUnitAmount * input.toQuantity * remaining);
  return { credit: credit === 0 ? 0 : credit, charge, net: credit + charge, invoiceNow: input.mode === 'always_invoice', remaining };
}
