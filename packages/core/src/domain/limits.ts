/** Seats one subscription may hold unless configured otherwise (`MAX_SEATS`). */
export const DEFAULT_MAX_SEATS = 10_000;
