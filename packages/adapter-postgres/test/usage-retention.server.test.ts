import { describeLedgerRetention } from './usage-retention';

// Collected only with TEST_DATABASE_URL (jest.config.js).
describeLedgerRetention('postgres');
