import type { Id, Owned } from './common';

/** Who uses a product: the vendor's identifier of a user or a team, as licenses name it (`granteeId`). */
export interface Grantee extends Owned {
  /** The vendor's own identifier, unique in the tenant; the licenses and the check name it. */
  granteeId: string;
  name: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A team of grantees of one owner (a customer). The group of a subscription has the subscription's
 * id and its members are the grantees of the subscription's seats (licenses); any other group
 * keeps its members as memberships.
 */
export interface Group extends Owned {
  customerId: Id;
  /** The subscription whose seats go to this group's members, if any. */
  subscriptionId: Id | null;
  name: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A grantee in a group without a subscription. */
export interface Membership extends Owned {
  groupId: Id;
  /** The grantee record's id (not the vendor's `granteeId`). */
  granteeRef: Id;
  createdAt: Date;
  updatedAt: Date;
}
