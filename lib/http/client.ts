import { z, type ZodType } from 'zod';
import { consoleEnvelope, type ConsoleContract } from './contract';
import { refusalStatus, type Refusal, type RefusalKind, type Result } from './refusal';

/**
 * The console's one typed client: components call a route through its contract, and the answer
 * is parsed by the contract's own output schema — no casts, and a server that answers something
 * else is an error here rather than a wrong screen. Server prefetch uses the same query keys and
 * the same schema (prefetchConsole), so hydration lands on the entry the client would have made.
 */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly kind: RefusalKind,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function isRefusalKind(code: string): code is RefusalKind {
  return Object.hasOwn(refusalStatus, code);
}

function queryString(input: unknown): string {
  const search = new URLSearchParams();
  if (input && typeof input === 'object') {
    for (const [key, value] of Object.entries(input)) {
      if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The URL a GET contract reads for `input` (links, downloads). */
export function consoleUrl<I extends ZodType, O extends ZodType>(contract: ConsoleContract<I, O>, input: z.input<I>): string {
  return `${contract.path}${contract.method === 'GET' ? queryString(input) : ''}`;
}

/** The contract's output schema applied to what the server sent (or, in a prefetch, loaded). */
export function parseOutput<O extends ZodType>(contract: { output: O }, data: unknown): z.ZodSafeParseResult<z.output<O>> {
  return contract.output.safeParse(data);
}

export async function callConsole<I extends ZodType, O extends ZodType>(
  contract: ConsoleContract<I, O>,
  input: z.input<I>,
  { fetcher = fetch }: { fetcher?: typeof fetch } = {},
): Promise<Result<z.output<O>>> {
  const init: RequestInit =
    contract.method === 'GET'
      ? { cache: 'no-store', headers: { accept: 'application/json' } }
      : { method: contract.method, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(input) };
  let response: Response;
  try {
    response = await fetcher(consoleUrl(contract, input), init);
  } catch {
    return { ok: false, refusal: { kind: 'internal', message: 'The console could not be reached. Check your connection and retry.' } };
  }
  if (response.status === 401) return { ok: false, refusal: { kind: 'unauthenticated', message: 'Your session ended. Sign in again.' } };
  const misunderstood: Result<never> = {
    ok: false,
    refusal: {
      kind: 'internal',
      message: `The console answered ${response.status} in a form this page does not understand. Reload; if it persists, check the console logs.`,
    },
  };
  const envelope = consoleEnvelope(z.unknown()).safeParse(await response.json().catch(() => null));
  if (!envelope.success) return misunderstood;
  if (envelope.data.ok) {
    const data = parseOutput(contract, envelope.data.data);
    return data.success ? { ok: true, data: data.data } : misunderstood;
  }
  const { code, message } = envelope.data.error;
  const refusal: Refusal = { kind: isRefusalKind(code) ? code : 'internal', message };
  return { ok: false, refusal };
}

/** For React Query: the data, or an ApiError carrying the server's words and status. */
export async function fetchConsole<I extends ZodType, O extends ZodType>(contract: ConsoleContract<I, O>, input: z.input<I>): Promise<z.output<O>> {
  const result = await callConsole(contract, input);
  if (!result.ok) throw new ApiError(result.refusal.message, refusalStatus[result.refusal.kind], result.refusal.kind);
  return result.data;
}

/** One key per contract and input, shared by the server prefetch and the client hooks. */
export function consoleQueryKey<I extends ZodType, O extends ZodType>(
  contract: ConsoleContract<I, O>,
  input: z.input<I>,
): readonly [string, string, z.input<I>] {
  return ['console', `${contract.method} ${contract.path}`, input];
}

export function consoleQuery<I extends ZodType, O extends ZodType>(contract: ConsoleContract<I, O>, input: z.input<I>) {
  return { queryKey: consoleQueryKey(contract, input), queryFn: () => fetchConsole(contract, input) };
}
