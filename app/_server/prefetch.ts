import type { QueryClient } from '@tanstack/react-query';
import type { z, ZodType } from 'zod';
import type { ConsoleContract } from '@/lib/http/contract';
import { consoleQueryKey, parseOutput } from '@/lib/http/client';

/**
 * A page's server prefetch for a console route: the same loader the route handler calls, under
 * the key the client hook uses, through the contract's output schema — so what hydrates is what
 * the client would have parsed from the wire.
 */
export async function prefetchConsole<I extends ZodType, O extends ZodType>(
  client: QueryClient,
  contract: ConsoleContract<I, O>,
  input: z.input<I>,
  load: () => Promise<z.input<O>>,
): Promise<void> {
  await client.prefetchQuery({
    queryKey: consoleQueryKey(contract, input),
    queryFn: async () => {
      const parsed = parseOutput(contract, await load());
      if (!parsed.success) throw new Error(`${contract.path}: the loader's answer does not match the contract: ${parsed.error.issues[0]?.message ?? ''}`);
      return parsed.data;
    },
  });
}
