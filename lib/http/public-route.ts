import type { z, ZodType } from 'zod';
import { createLogger } from '@/lib/log';
import type { PublicContract } from './contract';
import type { Result } from './refusal';
import { publicOk, publicRefusal } from './wire';

const log = createLogger('probe');

export type PublicRouteHandler = ((request: Request) => Promise<Response>) & { contract: PublicContract };

/**
 * A probe from its contract: no session, no input, the handler's state as JSON. Anyone may call
 * it, so it says up or down and nothing more: a refusal is its status (503 for "not ready") with
 * `{ error }` alone, and the reason (a driver's error text, the migrations a database lacks) goes
 * to the log. An error the handler throws is a 503 too, so a prober never mistakes a broken check
 * for a live console.
 */
export function publicRoute<O extends ZodType>(contract: PublicContract<O>, handler: () => Promise<Result<z.input<O>>>): PublicRouteHandler {
  const route = async (): Promise<Response> => {
    try {
      const result = await handler();
      if (result.ok) return publicOk(result.data);
      log.warn({ path: contract.path, reason: result.refusal.message, details: result.refusal.details }, 'probe: not ready');
      return publicRefusal(result.refusal);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error({ err: message, path: contract.path }, 'probe failed');
      return publicRefusal({ kind: 'unavailable', message: 'check failed' });
    }
  };
  return Object.assign(route, { contract });
}
