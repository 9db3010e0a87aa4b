import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { oidcEnabled } from '@/lib/auth/options';
import { SignInForm } from '@/components/auth/sign-in-form';
import { currentSession } from '@/app/_server/auth';
import { sameOriginPath } from '@/lib/http/same-origin';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const params = await searchParams;
  // Only a path on this console: an open redirect through the sign-in page is a phishing gift.
  const callbackUrl = sameOriginPath(params.callbackUrl);
  if (await currentSession()) redirect(callbackUrl);
  return (
    <div className="signin">
      <div className="card">
        <h1>notice-ledger</h1>
        <p className="muted">Sign in to the console.</p>
        <SignInForm callbackUrl={callbackUrl} oidc={oidcEnabled()} initialError={params.error ?? null} />
      </div>
    </div>
  );
}
