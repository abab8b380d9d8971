import type { Id, Owned } from './common';

export type LicenseStatus = 'ACTIVE' | 'TRIALING' | 'EVALUATION' | 'SCHEDULED' | 'INACTIVE' | 'CANCELED';

export interface License extends Owned {
  productId: Id;
  planId: Id;
  subscriptionId: Id | null;
  /** Who may use the product; null for an unassigned seat. */
  granteeId: string | null;
  /** The member who manages the license. */
  purchaser: string;
  email: string | null;
  name: string | null;
  paymentService: string;
  type: string;
  status: LicenseStatus;
  cancelAtPeriodEnd: boolean;
  startTime: Date;
  /** Null: the license does not end (free ad hoc licenses). */
  endTime: Date | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}
