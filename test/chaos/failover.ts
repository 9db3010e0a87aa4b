import { sql } from 'drizzle-orm';
import { createDb, createPool } from '@/db/client';
import { ingestEvents } from '@/lib/events/ingest';
import { checkAfterFailover } from '@/lib/events/post-failover';
import type { NormalizedEvent } from '@/lib/events/types';
import type { SmtpSink } from '@/testing/smtp-sink';
import type { TcpProxy } from '@/testing/tcp-proxy';
import type { PgCluster } from './pg-cluster';

/**
 * The failover of `npm run chaos -- --failover`, run mid-send by the chaos harness (its
 * `midRun`): SIGKILL the primary, cut every connection through the proxy (a dead host's
 * connections die too), promote the standby, then — before the proxy lets the console and
 * workers in again, as a runbook would — the post-failover step on the new primary:
 *
 * 1. the provider lookup: the relay's record of the messages it took since a minute before the
 *    failover, ingested as events (a provider's message search or event replay stands in for
 *    webhooks the old primary answered and then lost); a correlation with no ledger row is an
 *    orphan;
 * 2. `checkAfterFailover` since that instant: each orphan's notice recorded `sent`;
 * 3. the proxy repointed at the new primary.
 *
 * Claims the new primary holds as `claimed` (among them those whose commit answer was lost)
 * are left to quarantine and the reconciliation from the relay's events, as always.
 */

export type FailoverDrill = {
  rows: Array<[string, string | number]>;
  /** Orphans the check recorded sent: claims the new primary lacked. */
  orphansResolved: number;
};

export async function failOver({
  cluster,
  proxy,
  sink,
  databaseName,
  log,
}: {
  cluster: PgCluster;
  proxy: TcpProxy;
  sink: SmtpSink;
  databaseName: string;
  log: (line: string) => void;
}): Promise<FailoverDrill> {
  const messagesAtKill = sink.messages().length;
  const killedAt = Date.now();
  await cluster.killPrimary();
  proxy.dropAll();
  // Nothing behind the proxy until the promotion: a new connection is refused, as by a Service with no ready endpoint.
  proxy.retarget(1);
  log(`  … primary SIGKILLed at ${messagesAtKill} messages at the sink`);
  await cluster.promoteStandby();
  const promotedMs = Date.now() - killedAt;
  log(`  … standby promoted after ${promotedMs} ms`);

  const url = new URL(cluster.urlOf(cluster.standbyPort));
  url.pathname = `/${databaseName}`;
  const pool = createPool(url.toString(), { max: 2, applicationName: 'notice-ledger-chaos-failover' });
  const db = createDb(pool);
  try {
    const claimed = (await db.execute<{ count: number }>(sql`select count(*)::int as count from notice_ledger where state = 'claimed'`)).rows[0]?.count ?? 0;
    const since = new Date(killedAt - 60_000);
    const lookup: NormalizedEvent[] = sink
      .messages()
      .filter((message) => message.receivedAt.getTime() >= since.getTime() && message.correlation)
      .map((message) => ({
        provider: 'generic',
        eventId: `lookup-${message.queueId}`,
        type: 'accepted',
        rawType: 'accepted',
        correlationId: message.correlation,
        messageId: message.messageId,
        providerMessageId: message.queueId,
        recipient: null,
        bounceType: null,
        occurredAt: message.receivedAt,
        details: { source: 'provider_lookup' },
      }));
    const ingested = await ingestEvents(db, { events: lookup });
    const report = await checkAfterFailover(db, { since, actor: 'chaos:post-failover' });
    proxy.retarget(cluster.standbyPort);
    const outageMs = Date.now() - killedAt;
    log(
      `  … post-failover: ${claimed} claims held by the new primary, ${lookup.length} messages looked up at the relay, ${ingested.orphans} orphans, ${report.resolved.length} recorded sent; proxy repointed after ${outageMs} ms`,
    );
    return {
      orphansResolved: report.resolved.length,
      rows: [
        ['failover', `primary SIGKILLed at ${messagesAtKill} messages, standby promoted in ${promotedMs} ms, proxy repointed after ${outageMs} ms`],
        ['claims held by the new primary at promotion', `${claimed} (claimed; left to quarantine and the relay's events)`],
        [
          'post-failover check',
          `${lookup.length} relay messages looked up since ${since.toISOString()}, ${ingested.orphans} orphans, ${report.resolved.length} recorded sent`,
        ],
      ],
    };
  } finally {
    await pool.end();
  }
}
