import { describeLedgerRetention } from './usage-retention';

describeLedgerRetention('pglite');
