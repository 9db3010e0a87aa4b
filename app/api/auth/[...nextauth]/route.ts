import NextAuth from 'next-auth';
import { authOptions } from '@/lib/auth/options';

// Built per request so NEXTAUTH_SECRET is read at run time, not at `next build`.
function handler(request: Request, context: { params: Promise<{ nextauth: string[] }> }): Promise<Response> {
  return NextAuth(authOptions())(request, context) as Promise<Response>;
}

export { handler as GET, handler as POST };
