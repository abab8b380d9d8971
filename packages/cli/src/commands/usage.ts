import { CliError, type CommandModule } from '../command';
import { organisationFor } from '../support';

/** `tollgate usage verify` and `tollgate credits grant` (docs/usage.md). */
export const usage: CommandModule = {
  register(program, { io, services }) {
    program
      .command('usage')
      .description('metered usage')
      .command('verify')
      .description("check that every balance's counters equal its ledger's sums (exit 1 when not)")
      .option('--json', 'print {ok, mismatches} as JSON')
      .action(async (o: { json?: boolean }) => {
        const mismatches = await (await services()).core.usage.verify(1000);
        if (o.json)
          io.out(
            JSON.stringify({
              ok: mismatches.length === 0,
              mismatches: mismatches.map((m) => ({
                balanceId: m.balanceId,
                counters: Object.fromEntries(Object.entries(m.counters).map(([k, v]) => [k, String(v)])),
                ledger: Object.fromEntries(Object.entries(m.ledger).map(([k, v]) => [k, String(v)])),
              })),
            }),
          );
        else if (mismatches.length === 0) io.out('every balance equals its ledger');
        else
          for (const m of mismatches)
            io.err(
              `balance ${m.balanceId}: counters granted ${m.counters.granted} used ${m.counters.used} reserved ${m.counters.reserved}, ledger granted ${m.ledger.granted} used ${m.ledger.used} reserved ${m.ledger.reserved}`,
            );
        if (mismatches.length) throw new CliError(`${mismatches.length} balance(s) differ from their ledger`);
      });
    program
      .command('credits')
      .description('credits of metered usage')
      .command('grant')
      .description('grant units of a meter to an owner (as POST /api/credits/grants)')
      .requiredOption('--org <name>', 'the organisation')
      .requiredOption('--owner <owner>', 'who receives the units')
      .requiredOption('--meter <slug>', 'the meter')
      .requiredOption('--amount <n>', 'how many units')
      .option('--priority <p>', 'which grant is used first (lower first)')
      .option('--expires <iso>', 'when the units expire (ISO date and time)')
      .option('--source <source>', 'where the grant comes from')
      .option('--test', 'test mode')
      .option('--json', 'print the balance as JSON')
      .action(
        async (o: {
          org: string;
          owner: string;
          meter: string;
          amount: string;
          priority?: string;
          expires?: string;
          source?: string;
          test?: boolean;
          json?: boolean;
        }) => {
          const expiresAt = o.expires ? new Date(o.expires) : null;
          if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new CliError('--expires must be an ISO date and time', 2);
          const { core } = await services();
          const org = await organisationFor(core, o.org, false);
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
          if (o.json)
            io.out(
              JSON.stringify({
                grantId: a.grantId,
                owner: a.owner,
                meter: a.meterSlug,
                granted: a.granted,
                used: a.used,
                remaining: a.remaining,
              }),
            );
          else
            io.out(
              `granted ${o.amount} ${o.meter} to ${o.owner}: granted ${a.granted}, used ${a.used}, remaining ${a.remaining ?? 'unlimited'}`,
            );
        },
      );
  },
};
