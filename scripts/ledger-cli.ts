import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createDb, createPool, type Db } from '@/db/client';
import { startEmbeddedPostgres, type EmbeddedServer } from '@/db/embedded';
import { config } from '@/lib/config';
import { accountsUsage, parseAccountArgs, type AccountCommand } from './account-args';
import { parseReplayArgs, replayUsage, type ReplayCommand } from './replay-args';
import type { DryRun, ReplayView } from '@/lib/api/console/replays';
import { cancelReplay, decideReplay, dryRunFilter, dryRunUpload, requestReplay, startReplay } from '@/lib/replay/service';
import { rejectionsCsv } from '@/lib/replay/upload';
import { formatPercent } from '@/lib/replay/verdict';
import { getReplayView, listReplayViews } from '@/lib/replay/view';
import { verifiedActor } from './cli-credentials';
import { readDemoSettings } from './demo-settings';
import { cliActor, executeAccountCommand, Refused } from './ledger-accounts';
import { evidenceUsage, exportPackFile, verifyPackFile } from './evidence-cli';
import { checkAfterFailover } from '@/lib/events/post-failover';
import { parsePostFailoverArgs, postFailoverUsage, type PostFailoverCommand } from './post-failover-args';
import { controlsUsage, isControlCommand, parseControlArgs, type ControlCommand } from './control-args';
import { can } from '@/lib/auth/permissions';
import { listPauseViews, setPause } from '@/lib/controls/service';
import { countsOf, loadRolloutView, runBackfill } from '@/lib/controls/rollout';
import { activeNoticeConfig, noticeTypeLabel } from '@/lib/windows/active';
import { backfillUsage, isBackfillCommand, parseBackfillArgs, type BackfillCommand } from './backfill-args';

/**
 * The operations from a terminal, through the same lib/ functions as the console: replays
 * (`npm run ledger -- replay --help`), and the first console users and producer API tokens of
 * a fresh deployment (`… users --help`, `… tokens --help`). Every replay action `--as <email>`
 * asks that user's password (scripts/cli-credentials.ts): the CLI cannot act, nor approve, in
 * someone else's name. Exit codes: 0 done, 1 refused or failed, 2 usage.
 */

function printDryRun(dryRun: DryRun): void {
  const { counts, verdict } = dryRun;
  console.log(
    `keys: ${counts.total}  new: ${counts.newKeys}  already in the ledger: ${
      Object.entries(counts.existing)
        .map(([state, n]) => `${state} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  console.log(`would send: ${verdict.wouldSend} (${formatPercent(verdict.share)})  [dry run took ${dryRun.elapsedMs} ms]`);
  console.log(verdict.message);
}

function printView(view: ReplayView): void {
  const p = view.progress;
  console.log(
    `${view.id}  ${view.batchId}  ${view.state.padEnd(9)}  by ${view.requesterEmail ?? view.requestedBy}${view.deciderEmail ? `, decided by ${view.deciderEmail}` : ''}`,
  );
  console.log(
    `    published ${p.published}/${p.total}  suppressed ${p.suppressed}  sent ${p.sent}  failed ${p.failed}${view.verdict ? `  dry run: ${view.verdict.message}` : ''}`,
  );
}

function readCsv(file: string): string {
  if (!existsSync(file)) throw new Refused(`no such file: ${file}`);
  return readFileSync(file, 'utf8');
}

async function execute(db: Db, command: ReplayCommand): Promise<void> {
  const secret = config().NOTICE_KEY_SECRET;
  switch (command.kind) {
    case 'list': {
      for (const view of await listReplayViews(db, { limit: 50 })) printView(view);
      return;
    }
    case 'status': {
      const view = await getReplayView(db, { id: command.id });
      if (!view) throw new Refused('no such replay');
      printView(view);
      return;
    }
    case 'dry-run':
    case 'request': {
      if (command.csvPath) {
        const check = await dryRunUpload(db, { csv: readCsv(command.csvPath), secret });
        if (!check.ok) throw new Refused(check.refusal.message);
        console.log(`rows accepted: ${check.data.dryRun.accepted}  rejected: ${check.data.dryRun.rejections.length}`);
        if (check.data.dryRun.rejections.length > 0) {
          const out = `${command.csvPath}.rejected.csv`;
          writeFileSync(out, rejectionsCsv(check.data.dryRun.rejections));
          console.log(`rejected rows and why: ${path.resolve(out)}`);
        }
        printDryRun(check.data.dryRun);
      } else if (command.filter) {
        printDryRun(await dryRunFilter(db, { filter: command.filter }));
      }
      if (command.kind === 'dry-run') {
        console.log('Dry run only: nothing was changed. Add --request --as <email> --reason <text> to ask for approval.');
        return;
      }
      const actor = await verifiedActor(db, command.as ?? '');
      const input = command.csvPath
        ? { reason: command.reason ?? '', csv: readCsv(command.csvPath) }
        : { reason: command.reason ?? '', filter: command.filter ?? {} };
      const result = await requestReplay(db, { actor, input, secret });
      if (!result.ok) throw new Refused(result.refusal.message);
      console.log(`Requested replay ${result.data.replay.id} (batch ${result.data.replay.batchId}); a manager other than you must approve it.`);
      return;
    }
    case 'approve':
    case 'reject': {
      const actor = await verifiedActor(db, command.as);
      const result = await decideReplay(db, { id: command.id, actor, decision: command.kind, reason: command.reason });
      if (!result.ok) throw new Refused(result.refusal.message);
      console.log(`Replay ${result.data.id} is ${result.data.state}.`);
      return;
    }
    case 'cancel': {
      const actor = await verifiedActor(db, command.as);
      const result = await cancelReplay(db, { id: command.id, actor, reason: command.reason });
      if (!result.ok) throw new Refused(result.refusal.message);
      console.log(`Replay ${result.data.id} is cancelled; no further wake-ups will be published.`);
      return;
    }
    case 'run': {
      const actor = await verifiedActor(db, command.as);
      const started = await startReplay(db, { id: command.id, actor, reason: command.reason });
      if (!started.ok) throw new Refused(started.refusal.message);
      // Nothing long-running here: the workers publish a running replay (lib/replay/runner.ts).
      console.log(
        `Replay ${command.id} is running (batch ${started.data.batchId}, ${started.data.total} wake-ups); the workers publish it at the per-domain rate. Follow it on the console's Replays page.`,
      );
      return;
    }
  }
}

/**
 * The demo keeps its generated secrets and its database in DEMO_DATA_DIR (.data): read them so
 * the CLI derives the same keys and finds the demo's running PostgreSQL.
 */
function loadDemoSettings(): void {
  const { dataDir } = readDemoSettings();
  process.env.EMBEDDED_PG_DIR ??= path.join(dataDir, 'pg');
  const file = path.join(dataDir, 'demo-secrets.json');
  if (process.env.NOTICE_KEY_SECRET || !existsSync(file)) return;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  if (typeof stored.NOTICE_KEY_SECRET === 'string') process.env.NOTICE_KEY_SECRET = stored.NOTICE_KEY_SECRET;
}

type Command =
  | { family: 'replay'; command: ReplayCommand }
  | { family: 'accounts'; command: AccountCommand }
  | { family: 'post-failover'; command: PostFailoverCommand }
  | { family: 'evidence'; args: string[] }
  | { family: 'controls'; command: ControlCommand }
  | { family: 'backfill'; command: BackfillCommand };

async function executePostFailover(db: Db, command: PostFailoverCommand): Promise<void> {
  const report = await checkAfterFailover(db, { since: command.since, dryRun: command.dryRun, actor: cliActor() });
  for (const row of report.found) {
    console.log(`${row.correlationId}  job ${row.jobId} (${row.jobState})  ${row.provider} ${row.eventType} ${row.eventId} at ${row.occurredAt.toISOString()}`);
  }
  const verb = command.dryRun ? 'found (dry run: nothing changed)' : "recorded as sent from the provider's evidence";
  console.log(`post-failover since ${command.since.toISOString()}: ${report.found.length} notice(s) with provider evidence and no claim ${verb}`);
}

/** The kill switch from a terminal, through lib/controls/service.ts like the console. */
async function executeControlCommand(db: Db, command: ControlCommand): Promise<void> {
  if (command.kind === 'controls') {
    const pauses = await listPauseViews(db, { horizonMs: config().WINDOW_AT_RISK_WITHIN });
    if (pauses.length === 0) console.log('Nothing is paused.');
    for (const p of pauses)
      console.log(`paused: ${p.label} by ${p.changedBy} since ${p.since} (${p.reason}); unsent ${p.inScope}, closing soon ${p.closingWithinHorizon}`);
    return;
  }
  const actor = await verifiedActor(db, command.as);
  if (!can(actor.role, 'controls.manage'))
    throw new Refused(`${actor.email} is a ${actor.role}: pausing and resuming needs an operator or above; nothing was changed`);
  const result = await setPause(db, { action: command.kind, target: command.target, reason: command.reason, actor: actor.email });
  console.log(
    `${result.name}: ${result.value}${result.changed ? '' : ' (it already was)'}. Every worker sees it within ${config().RUNTIME_CONTROLS_REFRESH} ms.`,
  );
}

/** The rollout from a terminal: its figures, and the backfill (through lib/controls/rollout.ts like the console, audited as cli:<os user>). */
async function executeBackfillCommand(db: Db, command: BackfillCommand): Promise<void> {
  if (command.kind === 'rollout') {
    const view = await loadRolloutView(db, {
      fallbackMode: config().LEDGER_MODE,
      notices: activeNoticeConfig(),
      label: noticeTypeLabel,
      refreshMs: config().RUNTIME_CONTROLS_REFRESH,
    });
    console.log(`mode: ${view.mode}${view.stored ? ` since ${view.since} by ${view.changedBy}` : ' (LEDGER_MODE; not stored yet)'}`);
    if (view.daysInShadow !== null) console.log(`days in shadow: ${view.daysInShadow} of ${view.longestCycle.days} (${view.longestCycle.source})`);
    for (const row of view.duplicates)
      console.log(
        `  ${row.noticeType}: sent ${row.sent}, would have been suppressed ${row.wouldSuppress} (${row.rate === null ? '—' : formatPercent(row.rate)})`,
      );
    console.log(`sent jobs with no ledger row (enforce would treat them as new): ${view.backfill.treatedAsNew}`);
    if (view.request) console.log(`waiting for a second person: ${view.request.requestedBy} asked to enforce (${view.request.reason})`);
    return;
  }
  const source =
    command.source.kind === 'csv' ? { kind: 'csv' as const, text: readCsv(command.source.file), secret: config().NOTICE_KEY_SECRET } : command.source;
  const report = await runBackfill(db, { source, dryRun: command.dryRun, actor: cliActor(), reason: command.reason });
  if (report.invalid.length > 0) {
    for (const problem of report.invalid.slice(0, 50)) console.error(`  line ${problem.line}: ${problem.message}`);
    throw new Refused(`${report.invalid.length} invalid row(s); nothing written`);
  }
  const counts = countsOf(report);
  console.log(
    `${counts.total} notice(s): ${command.dryRun ? 'would insert' : 'inserted'} ${counts.newKeys}, already in the ledger ${counts.existing}${command.dryRun ? ' (dry run: nothing written)' : ''}; audited`,
  );
}

const isAccountCommand = (name: string | undefined) => name === 'users' || name === 'tokens';

function usageFor(name: string | undefined): string {
  if (isAccountCommand(name)) return accountsUsage;
  if (name === 'evidence') return evidenceUsage;
  if (name === 'post-failover') return postFailoverUsage;
  if (isControlCommand(name)) return controlsUsage;
  if (isBackfillCommand(name)) return backfillUsage;
  return name === 'replay'
    ? replayUsage
    : `${replayUsage}\n\n${accountsUsage}\n\n${evidenceUsage}\n\n${postFailoverUsage}\n\n${controlsUsage}\n\n${backfillUsage}`;
}

function parseCommand(argv: readonly string[]): { ok: true; command: Command } | { ok: false; error: string } {
  if (isBackfillCommand(argv[0])) {
    const parsed = parseBackfillArgs(argv);
    return parsed.ok ? { ok: true, command: { family: 'backfill', command: parsed.command } } : parsed;
  }
  if (isControlCommand(argv[0])) {
    const parsed = parseControlArgs(argv);
    return parsed.ok ? { ok: true, command: { family: 'controls', command: parsed.command } } : parsed;
  }
  if (argv[0] === 'post-failover') {
    const parsed = parsePostFailoverArgs(argv);
    return parsed.ok ? { ok: true, command: { family: 'post-failover', command: parsed.command } } : parsed;
  }
  if (isAccountCommand(argv[0])) {
    const parsed = parseAccountArgs(argv);
    return parsed.ok ? { ok: true, command: { family: 'accounts', command: parsed.command } } : parsed;
  }
  const parsed = parseReplayArgs(argv);
  return parsed.ok ? { ok: true, command: { family: 'replay', command: parsed.command } } : parsed;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usageFor(argv[0]));
    return 0;
  }
  // Verifying a pack needs no database and no settings: it branches before either is read.
  if (argv[0] === 'evidence' && argv[1] === 'verify') return verifyPackFile(argv.slice(2));
  if (argv[0] === 'evidence' && argv[1] !== 'export') {
    console.error(`ledger: evidence export | verify\n\n${evidenceUsage}`);
    return 2;
  }
  const parsed: ReturnType<typeof parseCommand> =
    argv[0] === 'evidence' ? { ok: true, command: { family: 'evidence', args: argv.slice(2) } } : parseCommand(argv);
  if (!parsed.ok) {
    console.error(`ledger: ${parsed.error}\n\n${usageFor(argv[0])}`);
    return 2;
  }
  loadDemoSettings();
  let server: EmbeddedServer | null = null;
  let databaseUrl = config().DATABASE_URL;
  if (!databaseUrl) {
    server = await startEmbeddedPostgres({ dir: config().EMBEDDED_PG_DIR });
    databaseUrl = server.url;
  }
  const pool = createPool(databaseUrl, { max: 4, applicationName: 'notice-ledger-cli' });
  try {
    const db = createDb(pool);
    if (parsed.command.family === 'evidence') return await exportPackFile(db, parsed.command.args);
    if (parsed.command.family === 'accounts') await executeAccountCommand(db, parsed.command.command);
    else if (parsed.command.family === 'post-failover') await executePostFailover(db, parsed.command.command);
    else if (parsed.command.family === 'controls') await executeControlCommand(db, parsed.command.command);
    else if (parsed.command.family === 'backfill') await executeBackfillCommand(db, parsed.command.command);
    else await execute(db, parsed.command.command);
    return 0;
  } catch (error) {
    if (error instanceof Refused) {
      console.error(`ledger: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await pool.end();
    if (server?.owned) await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
