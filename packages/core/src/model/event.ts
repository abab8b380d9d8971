import type { Id, Owned } from './common';

export type EventStatus = 'queued' | 'pending' | 'success' | 'failed';

export type EventPayload =
  | { type: 'seats.increment'; subscriptionId: Id; count: number; proration: Proration }
  | { type: 'seats.decrement'; subscriptionId: Id; count: number; proration: Proration };

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
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}
