import type { Role } from '@/db/schema/states';

// Module augmentation only merges with interfaces, so this file is the one place they appear.
/* eslint-disable @typescript-eslint/consistent-type-definitions */
declare module 'next-auth' {
  interface Session {
    /** mfaPending: a role that needs MFA without it enabled; only enrolling is allowed (lib/auth/mfa.ts). */
    user: { id: string; email: string; name: string; role: Role; mfaPending?: boolean };
    expires: string;
  }
  interface User {
    id: string;
    email: string;
    name: string;
    role?: Role;
  }
}

declare module 'next-auth/jwt' {
  interface JWT {
    sub?: string;
    role?: Role;
    email?: string;
    name?: string;
    /** The user's session_version when this session was issued (lib/auth/session.ts). */
    sv?: number;
    /** The sign-in's instant, seconds since the epoch: the session's absolute age. */
    authAt?: number;
  }
}
