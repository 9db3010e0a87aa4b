import type { DbOrTx } from '@/db/client';
import { userMfa } from '@/db/schema/auth';
import { sealMfaSecret } from '@/lib/auth/mfa-secret';
import { hashRecoveryCode, newRecoveryCodes, newTotpSecret } from '@/lib/auth/totp';

/** An enabled authenticator for a test user, as enrollment leaves it: the secret (to make codes with) and the recovery codes. */
export async function enrollTestMfa(
  db: DbOrTx,
  { userId, noticeKeySecret = process.env.NOTICE_KEY_SECRET ?? '' }: { userId: string; noticeKeySecret?: string },
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const secret = newTotpSecret();
  const recoveryCodes = newRecoveryCodes();
  await db.insert(userMfa).values({
    userId,
    secretSealed: sealMfaSecret({ secret, userId, noticeKeySecret }),
    enabledAt: new Date(),
    recoveryCodeHashes: recoveryCodes.map(hashRecoveryCode),
  });
  return { secret, recoveryCodes };
}
