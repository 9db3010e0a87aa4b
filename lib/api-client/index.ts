import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema';

export type { components, operations, paths } from './schema';

/**
 * A typed client for the producer API: openapi-fetch over the types openapi-typescript generated
 * from /api/v1/openapi.json (schema.ts, `npm run api:client`). Each call is checked against the
 * document at compile time: path, parameters, body, and the answer per status.
 */
export function createProducerClient({ baseUrl, token, fetch }: { baseUrl: string; token: string; fetch?: typeof globalThis.fetch }): Client<paths> {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` }, ...(fetch ? { fetch } : {}) });
}
