import { parseArgs } from 'node:util';
import type { Core } from '@tollgate/core';
import type { Io } from './cli';

export const USAGE_COMMANDS = `  usage verify [--json]                     check that every balance's counters equal its ledger's sums (exit 1 when not)
  credits grant --org NAME --owner O --meter SLUG --amount N [--priority P] [--expires ISO] [--source S] [--test] [--json]
                                            grant units of a meter to an owner`;

const usageError = (message: string) => Object.assign(new Error(message), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' });

/** `tollgate usage verify`: the ledger's sums against the counters, on a live database. */
export async function usageCommand(sub: string | undefined, argv: string[], core: Core, io: Io): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
  if (sub !== 'verify') throw usageError(`unknown usage command ${sub ?? ''}`.trim());
  const mismatches = await core.usage.verify(1000);
  if (values.json)
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
  return mismatches.length === 0 ? 0 : 1;
}

/** `tollgate credits grant`: units of a meter to an owner (the same use case as `POST /api/credits/grants`). */
export async function creditsCommand(sub: string | undefined, argv: string[], core: Core, io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      org: { type: 'string' },
      owner: { type: 'string' },
      meter: { type: 'string' },
      amount: { type: 'string' },
      priority: { type: 'string' },
      expires: { type: 'string' },
      source: { type: 'string' },
      test: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  if (sub !== 'grant') throw usageError(`unknown credits command ${sub ?? ''}`.trim());
  if (!values.org || !values.owner || !values.meter || !values.amount)
    throw usageError('credits grant needs --org, --owner, --meter and --amount');
  const org = await core.apiKeys.organisation(values.org);
  const tenant = { organisationId: org.id, isTest: !!values.test };
  const expiresAt = values.expires ? new Date(values.expires) : null;
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw usageError('--expires must be an ISO date and time');
  const a = await core.usage.grant(tenant, {
    owner: values.owner,
    meterSlug: values.meter,
    amount: values.amount,
    priority: values.priority === undefined ? undefined : Number(values.priority),
    expiresAt,
    source: values.source as never,
  });
  if (values.json)
    io.out(
      JSON.stringify({ grantId: a.grantId, owner: a.owner, meter: a.meterSlug, granted: a.granted, used: a.used, remaining: a.remaining }),
    );
  else
    io.out(
      `granted ${values.amount} ${values.meter} to ${values.owner}: granted ${a.granted}, used ${a.used}, remaining ${a.remaining ?? 'unlimited'}`,
    );
  return 0;
}
