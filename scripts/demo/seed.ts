import type pg from 'pg';
import { addIncidents } from './incidents';
import { addPaymentRecoveries, sendSomeRecoveriesBySms } from './payment-recoveries';
import { insertPointlessReplay } from './pointless-replay';
import { addRenewals } from './renewals';
import { insertAttempts, insertEvents, insertJobs, insertLedger, insertSuppressionsAndEvidence } from './rows';
import { createStory } from './story';

/**
 * Realistic demo data for `npm run demo`: a few thousand subscriptions and accounts whose
 * reminders are spread over the next seven days, a week of history (sent, duplicates the
 * ledger suppressed, provider events, bounces), a few stuck claims for quarantine and a
 * replay waiting for a manager. Deterministic (a fixed PRNG seed, drawn by the scenarios in
 * this order: ./renewals.ts, ./payment-recoveries.ts, ./incidents.ts), and idempotent: a second
 * run finds the marker and changes nothing. The planned notices of business events are
 * ./business-events.ts, run after this.
 */

export type DemoUser = { email: string; name: string; role: 'support' | 'oncall' | 'operator' | 'manager' | 'admin'; password: string };

export const demoUsers: DemoUser[] = [
  { email: 'support@demo.local', name: 'Sam Support', role: 'support', password: 'support-demo-pass' },
  { email: 'oncall@demo.local', name: 'Olu On-call', role: 'oncall', password: 'oncall-demo-pass' },
  { email: 'operator@demo.local', name: 'Ops Operator', role: 'operator', password: 'operator-demo-pass' },
  { email: 'manager@demo.local', name: 'Mia Manager', role: 'manager', password: 'manager-demo-pass' },
  { email: 'admin@demo.local', name: 'Ada Admin', role: 'admin', password: 'admin-demo-pass' },
];

export type SeedOptions = {
  secret: string;
  messageIdDomain: string;
  hashPassword: (password: string) => Promise<string>;
  now?: Date;
  subscriptions?: number;
  accounts?: number;
};

export type SeedSummary = { seeded: boolean; jobs: number; ledger: number; stuckClaims: number };

export async function seedDemo(pool: pg.Pool, options: SeedOptions): Promise<SeedSummary> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    // One seeder at a time, and only once: the admin user is the marker.
    await client.query('select pg_advisory_xact_lock(727275)');
    const marker = await client.query("select 1 from users where email = 'admin@demo.local'");
    if (marker.rowCount) {
      await client.query('rollback');
      return { seeded: false, jobs: 0, ledger: 0, stuckClaims: 0 };
    }
    const summary = await insertDemoData(client, options);
    await client.query('commit');
    return summary;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function insertDemoData(client: pg.PoolClient, options: SeedOptions): Promise<SeedSummary> {
  const now = options.now ?? new Date();
  const story = createStory({ now, secret: options.secret });
  addRenewals(story, options.subscriptions ?? 2400);
  addPaymentRecoveries(story, options.accounts ?? 400);
  const stuckClaims = addIncidents(story);

  await insertJobs(client, story.jobs, now);
  await sendSomeRecoveriesBySms(client);
  await insertLedger(client, story.ledger);
  await insertAttempts(client, story.attempts);
  await insertEvents(client, story.events);
  await insertSuppressionsAndEvidence(client, story);

  const userIds = new Map<string, string>();
  for (const user of demoUsers) {
    const row = await client.query<{ id: string }>('insert into users (email, name, role, password_hash) values ($1, $2, $3, $4) returning id', [
      user.email,
      user.name,
      user.role,
      await options.hashPassword(user.password),
    ]);
    userIds.set(user.role, row.rows[0]?.id ?? '');
  }
  await insertPointlessReplay(client, { jobs: story.jobs, now, operatorId: userIds.get('operator') });

  return { seeded: true, jobs: story.jobs.length, ledger: story.ledger.length, stuckClaims };
}
