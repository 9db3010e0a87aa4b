import { randomBytes } from 'node:crypto';
import type { NoticeFact } from '@/lib/windows/notice-fact';

/**
 * What the demo's scenarios add to (scripts/demo/seed.ts runs them in order): rows held in memory
 * and written at the end by ./rows.ts, one PRNG shared by all of them in a fixed order, so the
 * data is the same on every run.
 */

export const HOUR = 3_600_000;

export const domains = ['gmail.example', 'outlook.example', 'yahoo.example', 'fastmail.example', 'acme-corp.example', 'proton.example'];
export const timeZones = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Los_Angeles', 'Asia/Tokyo', 'Australia/Sydney'];
export const plans = ['Basic box', 'Family box', 'Premium box'];
export const customers = ['Ana Silva', 'Jonas Becker', 'Priya Raman', 'Léa Martin', 'Tom Walker', 'Mia Schneider', 'Kenji Sato', 'Olivia Brown'];
/** The recipient's locale: en and de have templates of their own; fr falls back to en, formatted for fr. */
export const locales = ['en-US', 'en-GB', 'de-DE', 'de-AT', 'fr-FR'];

/** mulberry32: small, deterministic, good enough for spreading demo data. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export type JobSeed = {
  id: string;
  key: string;
  fact: NoticeFact;
  email: string;
  timeZone: string;
  dueAt: Date;
  deadlineAt: Date;
  state: 'pending' | 'claimed' | 'sent' | 'suppressed';
  suppressionReason: string | null;
  attempts: number;
  evidenceRef: string | null;
  customerId: string;
  source: string;
  /** Exactly the variables the type's template declares (config/notice-ledger.json templates). */
  payload: Record<string, unknown>;
  /** The charge (renewals) or the reconciliation (payment recovery): the date the template shows. */
  anchorAt: Date;
  locale: string;
};

export type LedgerSeed = {
  key: string;
  jobId: string;
  state: 'claimed' | 'sent';
  claimedAt: Date;
  sentAt: Date | null;
  providerId: string | null;
  domain: string;
  fact: NoticeFact;
};
export type AttemptSeed = {
  jobId: string;
  key: string;
  at: Date;
  outcome: string;
  detail: string | null;
  errorClass: string | null;
  claimToCommitMs: number | null;
};
export type EventSeed = {
  eventId: string;
  type: string;
  rawType: string;
  key: string;
  providerId: string | null;
  recipient: string;
  at: Date;
  bounceType: string | null;
};

export type DuplicateCause = 'queue_redelivery' | 'concurrent_worker' | 'replay';

export type Story = {
  now: Date;
  secret: string;
  random: () => number;
  pick: <T>(items: readonly T[]) => T;
  jobs: JobSeed[];
  ledger: LedgerSeed[];
  attempts: AttemptSeed[];
  events: EventSeed[];
  suppressions: { email: string; reason: string; eventId: string }[];
  evidence: { ref: string; state: 'open' | 'resolved'; summary: string }[];
  /** A job sent a while after it was due: its ledger row, attempt, provider events and, with a cause, the duplicate the ledger suppressed. */
  addSent: (job: JobSeed, dueAt: Date, duplicateCause: DuplicateCause | null) => void;
};

export function createStory({ now, secret }: { now: Date; secret: string }): Story {
  const random = prng(20261129);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const story: Story = { now, secret, random, pick, jobs: [], ledger: [], attempts: [], events: [], suppressions: [], evidence: [], addSent: () => undefined };
  story.addSent = (job, dueAt, duplicateCause) => {
    const claimedAt = new Date(dueAt.getTime() + random() * 20 * 60_000);
    const claimToCommit = Math.round(8 + random() * 40 + (random() < 0.02 ? 400 : 0));
    const sentAt = new Date(claimedAt.getTime() + claimToCommit);
    const providerId = `demo-${randomBytes(6).toString('hex')}`;
    const domain = job.email.split('@')[1] ?? '';
    story.ledger.push({ key: job.key, jobId: job.id, state: 'sent', claimedAt, sentAt, providerId, domain, fact: job.fact });
    story.attempts.push({ jobId: job.id, key: job.key, at: sentAt, outcome: 'sent', detail: null, errorClass: null, claimToCommitMs: claimToCommit });
    story.events.push({
      eventId: `evt-acc-${job.key.slice(0, 16)}`,
      type: 'accepted',
      rawType: 'accepted',
      key: job.key,
      providerId,
      recipient: job.email,
      at: sentAt,
      bounceType: null,
    });
    if (random() < 0.93) {
      story.events.push({
        eventId: `evt-dlv-${job.key.slice(0, 16)}`,
        type: 'delivered',
        rawType: 'delivered',
        key: job.key,
        providerId,
        recipient: job.email,
        at: new Date(sentAt.getTime() + 2_000 + random() * 30_000),
        bounceType: null,
      });
    }
    if (duplicateCause) {
      story.attempts.push({
        jobId: job.id,
        key: job.key,
        at: new Date(sentAt.getTime() + 30_000 + random() * 3 * HOUR),
        outcome: 'suppressed_duplicate',
        detail: duplicateCause,
        errorClass: null,
        claimToCommitMs: null,
      });
    }
  };
  return story;
}
