import { describeMeterRelay } from './meter-relay';

// Collected only with TEST_DATABASE_URL (jest.config.js).
describeMeterRelay('postgres');
