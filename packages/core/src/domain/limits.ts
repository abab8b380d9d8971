/** Seats one subscription may hold unless configured otherwise (`MAX_SEATS`). */
export const DEFAULT_MAX_SEATS = 10_000;

/**
 * The longest grantee id a license holds (characters): what license creation and its updates
 * accept (v1/v2 `granteeId`, `maxLength: 320`, an e-mail address's longest). The capability check
 * refuses a longer one: no license could answer it, and every id it is asked is kept in memory.
 */
export const GRANTEE_ID_MAX_LENGTH = 320;

/** Distinct grantee ids one capability check may name (`granteeIds`). */
export const CHECK_GRANTEES_MAX = 100;
