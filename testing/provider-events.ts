import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs } from '@/db/schema/jobs';
import { noticeLedger } from '@/db/schema/ledger';
import type { SnsEnvelope } from '@/lib/api/webhooks';
import { snsStringToSign } from '@/lib/events/sns';
import { selfSignedCertificate } from './self-signed';

/** Test helpers only (fixtures, signing with test keys, rows a killed worker leaves behind). */

export function readFixture(name: string): string {
  return readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8');
}

/** A 64-hex notice key whose correlation (first 32 hex) is `correlation`. */
export function keyWithCorrelation(correlation: string, tail = 'ab'.repeat(16)): string {
  return `${correlation}${tail}`.slice(0, 64);
}

/**
 * What a worker killed after the hand-over leaves: a `claimed` ledger row and its `claimed`
 * job, no provider message id (the send response never came back).
 */
export async function insertClaimedNotice(
  db: DbOrTx,
  {
    noticeKey,
    email,
    providerMessageId = null,
    claimedAt = new Date(Date.now() - 20 * 60_000),
  }: { noticeKey: string; email: string; providerMessageId?: string | null; claimedAt?: Date },
): Promise<string> {
  const identity = { subscription_id: `sub_${noticeKey.slice(0, 8)}`, period_start: '2026-12-01' };
  const [job] = await db
    .insert(reminderJobs)
    .values({
      noticeKey,
      noticeType: 'renewal_notice_t72',
      identity,
      subjectId: identity.subscription_id,
      recipientEmail: email,
      dueAt: sql`now() - interval '1 hour'`,
      deadlineAt: sql`now() + interval '1 day'`,
      state: 'claimed',
      attempts: 1,
      nextAttemptAt: sql`now()`,
      source: 'test',
    })
    .returning({ id: reminderJobs.id });
  if (!job) throw new Error('job insert returned nothing');
  await db.insert(noticeLedger).values({
    noticeKey,
    noticeType: 'renewal_notice_t72',
    identity,
    jobId: job.id,
    state: 'claimed',
    claimToken: sql`gen_random_uuid()`,
    claimedBy: 'worker-killed',
    claimedAt,
    providerMessageId,
    recipientDomain: email.split('@')[1] ?? null,
  });
  return job.id;
}

export type TestSnsSigner = {
  certUrl: string;
  certificatePem: string;
  sign: (fields: Omit<SnsEnvelope, 'Signature' | 'SigningCertURL' | 'SignatureVersion'>, version?: '1' | '2') => SnsEnvelope;
};

/** A self-signed certificate standing in for SNS's (this machine has no network). */
export function createTestSnsSigner(certUrl = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem'): TestSnsSigner {
  const dir = mkdtempSync(path.join(tmpdir(), 'sns-cert-'));
  try {
    const { key, cert } = selfSignedCertificate(dir, { subject: '/CN=sns.amazonaws.com', altName: null, days: 2 });
    const keyPem = readFileSync(key, 'utf8');
    const certificatePem = readFileSync(cert, 'utf8');
    return {
      certUrl,
      certificatePem,
      sign: (fields, version = '2') => {
        const unsigned = { ...fields, SignatureVersion: version, SigningCertURL: certUrl, Signature: 'x' } as SnsEnvelope;
        const text = snsStringToSign(unsigned);
        if (text === null) throw new Error('incomplete SNS message');
        const signature = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256')
          .update(text, 'utf8')
          .sign(keyPem, 'base64');
        return { ...unsigned, Signature: signature };
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type TestSendgridSigner = { publicKeyBase64: string; sign: (body: string, timestamp: number) => Record<string, string> };

export function createTestSendgridSigner(): TestSendgridSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKeyBase64: (publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64'),
    sign: (body, timestamp) => ({
      'content-type': 'application/json',
      'X-Twilio-Email-Event-Webhook-Timestamp': String(timestamp),
      'X-Twilio-Email-Event-Webhook-Signature': createSign('sha256')
        .update(`${timestamp}${body}`)
        .sign(privateKey as KeyObject, 'base64'),
    }),
  };
}
