import { CliError, type CommandModule } from '../command';
import { organisationFor, print } from '../support';

const sums = (c: Record<string, bigint>) => Object.fromEntries(Object.entries(c).map(([k, v]) => [k, String(v)]));

/** `tollgate usage verify`: every balance's counters against its ledger's sums, on a live database. */
export const usage: CommandModule = {
  register(program, { io, services }) {
    const usage = program.command('usage').description('metered usage: balances and their ledger');
    usage
      .command('verify')
      .description("check that every balance's counters equal its ledger's sums (exit 1 when not)")
      .option('--json', 'print {ok, mismatches} as JSON')
      .action(async (o: { json?: boolean }) => {
        const { core } = await services();
        const mismatches = await core.usage.verify(1000);
        if (o.json) {
          const rows = mismatches.map((m) => ({ balanceId: m.balanceId, counters: sums(m.counters), ledger: sums(m.ledger) }));
          io.out(JSON.stringify({ ok: mismatches.length === 0, mismatches: rows }));
        } else if (mismatches.length === 0) io.out('every balance equals its ledger');
        else
          for (const m of mismatches)
            io.err(
              `balance ${m.balanceId}: counters granted ${m.counters.granted} used ${m.counters.used} reserved ${m.counters.reserved}, ledger granted ${m.ledger.granted} used ${m.ledger.used} reserved ${m.ledger.reserved}`,
            );
        if (mismatches.length > 0) throw new CliError(`${mismatches.length} balance(s) differ from their ledger`);
      });
  },
};

interface GrantOptions {
  org: string;
  owner: string;
  meter: string;
  amount: string;
  priority?: string;
  expires?: string;
  source?: string;
  test?: boolean;
  createOrg?: boolean;
  json?: boolean;
}

/** `tollgate credits grant`: units of a meter to an owner (the use case of `POST /api/credits/grants`). */
export const credits: CommandModule = {
  register(program, { io, services }) {
    const credits = program.command('credits').description('credit grants of metered units');
    credits
      .command('grant')
      .description('grant units of a meter to an owner')
      .requiredOption('--org <name>', 'the organisation')
      .requiredOption('--owner <owner>', 'the customer (owner) the units are for')
      .requiredOption('--meter <slug>', 'the meter')
      .requiredOption('--amount <n>', 'whole units to grant')
      .option('--priority <p>', 'drawn lower first (0..100, default 50)')
      .option('--expires <iso>', 'when unused units lapse (ISO date and time)')
      .option('--source <source>', 'plan, purchase, promotion or adjustment')
      .option('--test', 'a test-mode grant')
      .option('--create-org', 'create the organisation if it does not exist')
      .option('--json', 'print the balance after the grant as JSON')
      .action(async (o: GrantOptions) => {
        const { core } = await services();
        const org = await organisationFor(core, o.org, o.createOrg);
        const expiresAt = o.expires ? new Date(o.expires) : null;
        if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new CliError('--expires must be an ISO date and time', 2);
        const a = await core.usage.grant(
          { organisationId: org.id, isTest: !!o.test },
          {
            owner: o.owner,
            meterSlug: o.meter,
            amount: o.amount,
            priority: o.priority === undefined ? undefined : Number(o.priority),
            expiresAt,
            source: o.source as never,
          },
        );
        const row = { grantId: a.grantId, owner: a.owner, meter: a.meterSlug, granted: a.granted, used: a.used, remaining: a.remaining };
        print(io, o.json, row, (r) => [
          `granted ${o.amount} ${o.meter} to ${o.owner}: granted ${r.granted}, used ${r.used}, remaining ${r.remaining ?? 'unlimited'}`,
        ]);
      });
  },
};
