import type { Session } from 'next-auth';
import type { z, ZodType } from 'zod';
import type { DbOrTx } from '@/db/client';
import { getDb } from '@/lib/process-db';
import { allowedBeforeMfa, MFA_PENDING_MESSAGE } from '@/lib/auth/mfa';
import { can } from '@/lib/auth/permissions';
import { sessionFromCookieHeader } from '@/lib/auth/session';
import { checkNoticeTypesAgainst } from '@/lib/api/fields';
import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { readConsoleUpload } from '@/lib/replay/upload-body';
import type { UploadValidation } from '@/lib/replay/upload';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { readJson, readQuery } from './body';
import { csvFile, type ConsoleContract } from './contract';
import { refuse, type Result } from './refusal';
import { checkConsoleMutation } from './same-origin';
import { consoleOk, consoleRefusal, csvResponse } from './wire';

const log = createLogger('console-api');

// A filter's notice type is checked against the operator's configuration, read here on the server.
checkNoticeTypesAgainst(configuredNoticeTypeNames);

export type ConsoleCaller = { session: Session; actor: string };

/** Who may: 401 without a session, 403 for a role the permission map does not list. */
export function authorize(session: Session | null, permission: ConsoleContract['permission']): Result<ConsoleCaller> {
  if (!session) return refuse('unauthenticated', 'Sign in first.');
  if (!can(session.user.role, permission)) return refuse('forbidden', `Your role (${session.user.role}) may not ${permission}.`);
  if (session.user.mfaPending && !allowedBeforeMfa(permission)) return refuse('forbidden', MFA_PENDING_MESSAGE);
  return { ok: true, data: { session, actor: session.user.email } };
}

/** `upload`: a `streamsUpload` route's validated file (null when the body had none, and on every other route). */
export type ConsoleHandlerContext<I extends ZodType> = ConsoleCaller & { db: DbOrTx; request: Request; input: z.output<I>; upload: UploadValidation | null };

export type ConsoleHandler<I extends ZodType, O extends ZodType> = (context: ConsoleHandlerContext<I>) => Promise<Result<z.input<O>>>;

export type ConsoleRouteHandler = ((request: Request) => Promise<Response>) & { contract: ConsoleContract };

/** The query (GET), the JSON body, or a replay upload streamed through its validator. */
async function readInput<I extends ZodType>(
  request: Request,
  contract: ConsoleContract<I>,
): Promise<Result<{ input: z.output<I>; upload: UploadValidation | null }>> {
  if (contract.streamsUpload) return readConsoleUpload(request, contract.input);
  const input =
    contract.method === 'GET' ? readQuery(request, contract.input) : await readJson(request, contract.input, { limitBytes: contract.bodyLimitBytes });
  return input.ok ? { ok: true, data: { input: input.data, upload: null } } : input;
}

/**
 * A console route handler from its contract: session and permission first (nothing is read
 * before); a POST/PUT only as JSON from the console's own origin (lib/http/same-origin.ts); then
 * the query or body through the contract's input schema, then the handler. An
 * error the handler throws is logged with the path and answered 500 without its message.
 */
export function consoleRoute<I extends ZodType, O extends ZodType>(contract: ConsoleContract<I, O>, handler: ConsoleHandler<I, O>): ConsoleRouteHandler {
  const route = async (request: Request): Promise<Response> => {
    try {
      const db = getDb();
      const caller = authorize(await sessionFromCookieHeader(db, request.headers.get('cookie')), contract.permission);
      if (!caller.ok) return consoleRefusal(caller.refusal);
      if (contract.method !== 'GET') {
        const settings = config();
        const own = checkConsoleMutation(request, {
          configuredUrls: [settings.PUBLIC_BASE_URL, settings.NEXTAUTH_URL],
          trustedHops: settings.TRUSTED_PROXY_HOPS,
        });
        if (!own.ok) return consoleRefusal(own.refusal);
      }
      const read = await readInput(request, contract);
      if (!read.ok) return consoleRefusal(read.refusal);
      const result = await handler({ ...caller.data, db, request, ...read.data });
      if (!result.ok) return consoleRefusal(result.refusal);
      if (contract.format === 'csv') {
        const file = csvFile.safeParse(result.data);
        if (!file.success) throw new Error(`${contract.path}: a csv route's handler must answer { filename, csv }`);
        return csvResponse(file.data);
      }
      return consoleOk(result.data, contract.status);
    } catch (error) {
      log.error({ err: error instanceof Error ? error.message : String(error), path: contract.path }, 'console request failed');
      return consoleRefusal({ kind: 'internal', message: 'The console could not complete this request. Retry; if it persists, check the console logs.' });
    }
  };
  return Object.assign(route, { contract });
}
