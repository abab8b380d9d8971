/** Identifiers are UUID v4 strings everywhere. */
export type Id = string;

/** The organisation and mode (test or live) that a request acts within. */
export interface Tenant {
  organisationId: Id;
  isTest: boolean;
}

/** Every vendor record belongs to one organisation and one mode. */
export interface Owned {
  id: Id;
  organisationId: Id;
  isTest: boolean;
}

export type Interval = 'day' | 'week' | 'month' | 'year';
export const INTERVALS: readonly Interval[] = ['day', 'week', 'month', 'year'];

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
  previousCursor: string | null;
}
