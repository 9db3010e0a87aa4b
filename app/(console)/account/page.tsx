import type { Metadata } from 'next';
import { roleLabels } from '@/lib/auth/roles';
import { PasswordChange } from '@/components/auth/password-change';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Account' };
export const dynamic = 'force-dynamic';

export default async function AccountPage() {
  const auth = await requirePage('account.password', '/account');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const { email, role } = auth.session.user;
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
      <PasswordChange email={email} />
    </>
  );
}
