import type { Metadata } from 'next';
import { roleLabels } from '@/lib/auth/roles';
import { getDb } from '@/lib/process-db';
import { MfaSetup } from '@/components/auth/mfa-setup';
import { PasswordChange } from '@/components/auth/password-change';
import { loadMfaStatus } from '@/lib/console/mfa';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Account' };
export const dynamic = 'force-dynamic';

export default async function AccountPage() {
  const auth = await requirePage('account.password', '/account');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const { email, role, id, mfaPending } = auth.session.user;
  const mfa = await loadMfaStatus(getDb(), id);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Account</h1>
          <p>
            Signed in as {email} ({roleLabels[role]}). Changing your password ends every session of yours, on every device; this one signs in again with the new
            password.
          </p>
        </div>
      </div>
      {mfaPending ? (
        <div className="banner critical" role="alert" data-testid="mfa-required">
          As {roleLabels[role].toLowerCase()} you must sign in with an authenticator app. Set one up below; until then the rest of the console is closed to you.
        </div>
      ) : null}
      <PasswordChange email={email} />
      <MfaSetup initial={mfa} />
    </>
  );
}
