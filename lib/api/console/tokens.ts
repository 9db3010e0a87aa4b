import { z } from 'zod';
import { apiTokenScopes } from '@/db/schema/states';
import { consoleContract, noInput } from '@/lib/http/contract';
import { instant, text } from '@/lib/api/fields';

const changeReason = text().trim().min(3).max(500);

/** The scopes a token may hold, for the Tokens page (components read no db/ module). */
export const tokenScopeNames = apiTokenScopes;

export const tokenScopes = z
  .array(z.enum(apiTokenScopes))
  .min(1, 'choose at least one scope')
  .max(apiTokenScopes.length)
  .refine((scopes) => new Set(scopes).size === scopes.length, 'each scope once');

export const createTokenRequest = z.strictObject({
  name: text().trim().min(1).max(200),
  reason: changeReason,
  scopes: tokenScopes,
  /** Refused from this instant on (must be in the future); absent, the token does not expire. */
  expiresAt: instant.nullable().optional(),
});

export const revokeTokenRequest = z.strictObject({ id: z.uuid(), reason: changeReason });

export const tokenView = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  createdAt: instant,
  lastUsedAt: instant.nullable(),
  revokedAt: instant.nullable(),
  scopes: z.array(z.enum(apiTokenScopes)),
  expiresAt: instant.nullable(),
});
export type TokenView = z.infer<typeof tokenView>;

/** The clear token is in this answer and nowhere else: the page shows it once. */
export const createdToken = z.object({ token: z.string(), summary: tokenView });
export type CreatedToken = z.infer<typeof createdToken>;

export const listTokensContract = consoleContract({
  method: 'GET',
  path: '/api/console/tokens',
  permission: 'tokens.manage',
  input: noInput,
  output: z.array(tokenView),
});
export const createTokenContract = consoleContract({
  method: 'POST',
  path: '/api/console/tokens',
  permission: 'tokens.manage',
  input: createTokenRequest,
  output: createdToken,
  status: 201,
});
export const revokeTokenContract = consoleContract({
  method: 'POST',
  path: '/api/console/tokens/revoke',
  permission: 'tokens.manage',
  input: revokeTokenRequest,
  output: tokenView,
});
