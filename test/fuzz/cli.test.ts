import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roles } from '@/lib/auth/roles';
import { parseAccountArgs } from '@/scripts/account-args';
import { parseReplayArgs } from '@/scripts/replay-args';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { FUZZ_SEED, fuzzParameters, hostileString, plausibleString } from './arbitraries';
import { snapshotTables } from './harness';
import { runScript, scriptEnv, type ScriptRun } from '@/testing/run-script';

/**
 * The CLIs' arguments. The replay parser is pure, so it takes the bulk of the runs; then a
 * handful of generated bad invocations of each real script (spawned, against a real database)
 * must exit 2 with a usage message, no stack trace, and every table unchanged.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await t.pool.query(
    `insert into users (email, name, role) values ('fuzz-operator@example.com', 'Operator', 'operator'), ('fuzz-manager@example.com', 'Manager', 'manager')`,
  );
});

afterAll(async () => {
  await t.drop();
});

const flagNames = [
  '--from',
  '--to',
  '--type',
  '--source',
  '--csv',
  '--request',
  '--approve',
  '--reject',
  '--run',
  '--cancel',
  '--status',
  '--list',
  '--as',
  '--reason',
  '--help',
  '-h',
  '--',
  '-',
  '--from-jobs',
  '--limit',
  '--dry-run',
  '--unknown',
  '--as=',
  '--from=2026-11-29T00:00:00Z',
];
const argument = fc.oneof(
  { arbitrary: fc.constantFrom(...flagNames), weight: 3 },
  { arbitrary: plausibleString, weight: 2 },
  { arbitrary: hostileString.filter((text) => text.length < 5_000), weight: 2 },
);
const replayArgv = fc
  .tuple(fc.constantFrom('replay', 'replay', 'replay', 'replays', '', 'REPLAY', '--help'), fc.array(argument, { maxLength: 8 }))
  .map(([command, rest]) => [command, ...rest]);

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('parseReplayArgs with hostile argv', () => {
  it('never throws; anything it accepts is well-formed', () => {
    fc.assert(
      fc.property(replayArgv, (argv) => {
        const parsed = parseReplayArgs(argv);
        if (!parsed.ok) {
          expect(parsed.error.length).toBeGreaterThan(0);
          return;
        }
        const command = parsed.command;
        if ('id' in command) expect(command.id).toMatch(uuidPattern);
        if (command.kind === 'dry-run' || command.kind === 'request') {
          expect(command.filter !== null || command.csvPath !== null).toBe(true);
          if (command.filter?.noticeType !== undefined) expect(configuredNoticeTypeNames()).toContain(command.filter.noticeType);
          for (const time of [command.filter?.dueFrom, command.filter?.dueTo]) if (time !== undefined) expect(Number.isNaN(Date.parse(time))).toBe(false);
        }
        if (command.kind === 'request' || command.kind === 'approve' || command.kind === 'reject' || command.kind === 'cancel') {
          expect(command.as?.length ?? 0).toBeGreaterThan(0);
          expect(command.reason?.length ?? 0).toBeGreaterThan(0);
        }
      }),
      fuzzParameters(2_000),
    );
  });
});

const accountFlags = [
  '--email',
  '--role',
  '--name',
  '--reason',
  '--id',
  '--generate-password',
  '--password',
  '--help',
  '--',
  '-',
  '--email=',
  '--role=admin',
  'admin',
  'someone@example.com',
  '00000000-0000-4000-8000-000000000000',
];
const accountArgument = fc.oneof(
  { arbitrary: fc.constantFrom(...accountFlags), weight: 3 },
  { arbitrary: plausibleString, weight: 2 },
  { arbitrary: hostileString.filter((text) => text.length < 5_000), weight: 2 },
);
const accountArgv = fc
  .tuple(
    fc.constantFrom('users', 'tokens', 'Users', ''),
    fc.constantFrom('create', 'list', 'revoke', 'delete', ''),
    fc.array(accountArgument, { maxLength: 8 }),
  )
  .map(([family, action, rest]) => [family, action, ...rest]);

describe('parseAccountArgs with hostile argv', () => {
  it('never throws; anything it accepts is well-formed', () => {
    fc.assert(
      fc.property(accountArgv, (argv) => {
        const parsed = parseAccountArgs(argv);
        if (!parsed.ok) {
          expect(parsed.error.length).toBeGreaterThan(0);
          return;
        }
        const command = parsed.command;
        if (command.kind === 'users.create') {
          expect(command.email).toMatch(/^[^@\s]+@[^@\s]+$/);
          expect(command.email).toBe(command.email.toLowerCase());
          expect(roles).toContain(command.role);
          expect(command.name.trim().length).toBeGreaterThan(0);
        }
        if (command.kind === 'tokens.revoke') expect(command.id).toMatch(uuidPattern);
        if (command.kind === 'tokens.create') expect(command.name.trim().length).toBeGreaterThan(0);
        if ('reason' in command) expect(command.reason.trim().length).toBeGreaterThanOrEqual(3);
      }),
      fuzzParameters(2_000),
    );
  });
});

function runCli(script: string, args: string[]): Promise<ScriptRun> {
  return runScript({ script, args, env: scriptEnv(t.url) });
}

/** argv must survive exec: no NUL, which the kernel cannot pass. */
const passable = (argv: string[]) => argv.every((arg) => !arg.includes('\u0000'));

const badReplayInvocations = [
  ['replay'],
  ['replay', '--approve', "1'; drop table replays; --", '--as', 'fuzz-manager@example.com', '--reason', 'x'],
  ['replay', '--from', '2026-02-30T00:00:00Z', '--request', '--as', 'fuzz-operator@example.com', '--reason', 'x'],
  ['replay', '--csv', '../../../../etc/passwd', '--type', 'renewal_notice_t72'],
  ...fc.sample(
    replayArgv.filter((argv) => passable(argv) && !argv.includes('--help') && !argv.includes('-h') && !parseReplayArgs(argv).ok),
    { seed: FUZZ_SEED, numRuns: 1 },
  ),
];

const limitValue = fc.oneof(
  fc.constantFrom('0', '-1', '1.5', 'abc', '1e3', '', ' ', 'Infinity', '9'.repeat(400)),
  hostileString.filter((text) => !/^\s*\d+\s*$/.test(text)),
);
/** `npm run ledger -- backfill …`, each with a valid reason so the refusal is the bad part's. */
const badBackfillInvocations = [
  ['--csv', 'a.csv', '--from-jobs'],
  ['--bogus', "'; drop table notice_ledger; --"],
  ['--csv'],
  ['--from-jobs', '--limit', '0'],
  ['--from-jobs', '--limit', '5', '--csv', 'a.csv'],
  ...fc.sample(
    limitValue.filter((value) => passable([value])).map((value) => ['--from-jobs', '--limit', value]),
    { seed: FUZZ_SEED, numRuns: 1 },
  ),
].map((args) => ['backfill', ...args, '--reason', 'fuzz: rollout drill']);

/** Runs the invocations three at a time (they are all refusals, so one snapshot around the batch shows any change). */
async function expectUsageRefusal(script: string, invocations: string[][], usagePattern: RegExp): Promise<void> {
  const before = await snapshotTables(t.pool);
  const runs: Array<{ args: string[]; run: ScriptRun }> = [];
  for (let index = 0; index < invocations.length; index += 3) {
    const batch = invocations.slice(index, index + 3);
    runs.push(...(await Promise.all(batch.map(async (args) => ({ args, run: await runCli(script, args) })))));
  }
  for (const { args, run } of runs) {
    const context = `${script} ${JSON.stringify(args).slice(0, 200)}: exit ${run.code}, stderr ${run.stderr.slice(0, 300)}`;
    expect(run.code, context).toBe(2);
    expect(run.stderr, context).toMatch(usagePattern);
    expect(run.stderr, context).not.toMatch(/\n\s+at\s/);
  }
  expect(await snapshotTables(t.pool)).toEqual(before);
}

describe('the real CLIs refuse bad arguments with exit 2, a usage message and no change', () => {
  it('npm run ledger -- replay …', async () => {
    await expectUsageRefusal('scripts/ledger-cli.ts', badReplayInvocations, /Usage:/);
  }, 240_000);

  it('npm run ledger -- backfill …', async () => {
    await expectUsageRefusal('scripts/ledger-cli.ts', [...badBackfillInvocations, ['backfill', '--from-jobs'], ['rollout', '--dry-run']], /Usage/);
  }, 240_000);
});
