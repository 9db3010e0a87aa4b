import type { z, ZodType } from 'zod';
import { createLogger } from '@/lib/log';
import type { PublicContract } from './contract';
import type { Result } from './refusal';
import { publicOk, publicRefusal } from './wire';

const log = createLogger('probe');

export type PublicRouteHandler = ((request: Request) => Promise<Response>) & { contract: PublicContract };

/**
 * A probe from its contract: no session, no input, the handler's state as JSON. A refusal is
 * its status (503 for "not ready") with the reason; an error the handler throws is a 503 too,
 * logged, so a prober never mistakes a broken check for a live console.
 */
export function publicRoute<O extends ZodType>(contract: PublicContract<O>, handler: () => Promise<Result<z.input<O>>>): PublicRouteHandler {
  const route = async (): Promise<Response> => {
    try {
      const result = await handler();
      return result.ok ? publicOk(result.data) : publicRefusal(result.refusal);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error({ err: message, path: contract.path }, 'probe failed');
      return publicRefusal({ kind: 'unavailable', message: `check failed: ${message}` });
    }
  };
  return Object.assign(route, { contract });
}
