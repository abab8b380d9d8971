import type { Id, License } from '../model';

/** Seat licenses are made and written this many at a time (one multi-row insert each). */
export const SEAT_BATCH = 500;

/**
 * `count` new seat licenses of a subscription, made on demand `SEAT_BATCH` at a time, so that no
 * array ever holds one object per seat of a large purchase. The first one may go to a grantee.
 */
export class NewSeats {
  constructor(
    private readonly template: License,
    readonly count: number,
    private readonly newId: () => Id,
    firstGrantees: string | null | readonly string[] = null,
  ) {
    this.firstGrantees = firstGrantees === null ? [] : typeof firstGrantees === 'string' ? [firstGrantees] : firstGrantees;
  }

  private readonly firstGrantees: readonly string[];

  *batches(size = SEAT_BATCH): Generator<License[]> {
    for (let start = 0; start < this.count; start += size) {
      const n = Math.min(size, this.count - start);
      yield Array.from({ length: n }, (_, i) => ({
        ...this.template,
        id: this.newId(),
        granteeId: this.firstGrantees[start + i] ?? null,
      }));
    }
  }

  /** Every seat in one array: for small counts (tests, the memory adapter). */
  all(): License[] {
    return [...this.batches()].flat();
  }
}
