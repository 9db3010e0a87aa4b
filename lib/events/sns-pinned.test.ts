import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSnsKeyResolver, readPinnedSnsCertificate, verifySnsMessage } from './sns';
import { createTestSnsSigner } from '@/testing/provider-events';

describe('SNS_CERT_DIR: pinned signing certificates', () => {
  const signer = createTestSnsSigner('https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-pinned.pem');
  const dir = mkdtempSync(path.join(tmpdir(), 'sns-pinned-'));
  writeFileSync(path.join(dir, 'SimpleNotificationService-pinned.pem'), signer.certificatePem);
  const resolveKey = createSnsKeyResolver({ fetcher: readPinnedSnsCertificate(dir) });
  const fields = {
    Type: 'Notification' as const,
    MessageId: 'm-1',
    TopicArn: 'arn:aws:sns:eu-west-1:123456789012:t',
    Message: '{}',
    Timestamp: new Date().toISOString(),
  };

  it('verifies a notification signed with the pinned certificate, fetching nothing', async () => {
    expect(await verifySnsMessage({ value: signer.sign(fields), resolveKey, allowedTopics: [fields.TopicArn] })).toMatchObject({ ok: true });
  });

  it('refuses a certificate URL that names no pinned file, or tries to leave the directory', async () => {
    for (const certUrl of [
      'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-other.pem',
      'https://sns.eu-west-1.amazonaws.com/x/..%2f..%2fetc%2fssl%2fcert.pem',
    ]) {
      const message = { ...signer.sign(fields), SigningCertURL: certUrl };
      expect(await verifySnsMessage({ value: message, resolveKey, allowedTopics: [fields.TopicArn] })).toEqual({
        ok: false,
        refusal: { kind: 'unauthenticated', message: 'signing certificate unavailable' },
      });
    }
    await expect(readPinnedSnsCertificate(dir)('https://sns.eu-west-1.amazonaws.com/..%2fpasswd.pem')).rejects.toThrow('not allowed');
  });
});
