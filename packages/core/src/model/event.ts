import type { Id, Owned } from './common';

export type EventStatus = 'queued' | 'pending' | 'success' | 'failed';

/** One seat change, the same shape from the route to the worker. */
export interface SeatChange {
  type: 'seats.increment' | 'seats.decrement';
  count: number;
  proration: Proration;
  /**
   * The seats asked for (the catalog API sets a number of seats): applied as the difference from
   * the quantity when the change is applied, so a repeated request is not counted twice. Absent:
   * `count` seats more or fewer (v1's increments and decrements).
   */
  quantity?: number;
}

export type EventPayload = SeatChange & { subscriptionId: Id };

export type EventType = EventPayload['type'];
export type Proration = 'create_prorations' | 'none' | 'always_invoice';
export const PRORATIONS: readonly Proration[] = ['create_prorations', 'none', 'always_invoice'];

export interface DomainEvent extends Owned {
  type: EventType;
  subscriptionId: Id | null;
  payload: EventPayload;
  /** queued: waiting for its first try; pending: a try failed and a retry is due; success / failed: done. */
  status: EventStatus;
  attempts: number;
  runAt: Date;
  /** Why the last try failed: a stable code and a message safe to show (never a driver's text). */
  lastError: string | null;
  errorCode: string | null;
  /** While a worker applies it: until when the event is its own (others skip it; a crashed worker's lease runs out). */
  lockedUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
