import { describeMeterRelay } from './meter-relay';

describeMeterRelay('pglite');
