import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the local HTTP provider peers (Postmark, SES v2, SendGrid) share: a real HTTP server on a
 * free port that reads each request whole before it decides anything, and the request-level
 * faults every peer offers. Each peer keeps its own routes, documented shapes and records.
 *
 * Faults, in the order a real provider would meet them:
 * - `throttle`: 429 before anything is accepted, with `Retry-After` when `retryAfterSeconds` is
 *   given (the peer adds the provider's own rate-limit headers where it documents any);
 * - `delay`: the request is accepted, then answered normally after `ms`;
 * - `error-after-accept`: the request is accepted and recorded, then answered 5xx;
 * - `drop-after-accept`: the request is accepted and recorded, then its socket is destroyed
 *   without an answer.
 */
export type RequestFault =
  | { kind: 'none' }
  | { kind: 'throttle'; retryAfterSeconds?: number }
  | { kind: 'delay'; ms: number }
  | { kind: 'error-after-accept'; status?: 500 | 502 | 503 }
  | { kind: 'drop-after-accept' };

/** A fault for every request, or one chosen by the request's position (0-based) on the send endpoints. */
export type FaultSetting = RequestFault | ((requestIndex: number) => RequestFault);

/** How a request that was accepted got (or did not get) its answer. */
export type Answered = 'ok' | 'delayed' | 'server-error' | 'dropped';

export type PeerRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The host the client connected to, as the `Host` header names it. */
  host: string;
};

export type PeerReply = { status: number; headers?: Record<string, string>; body?: unknown };

export type PeerExchange = PeerRequest & {
  reply: (reply: PeerReply) => void;
  /** Destroys the socket without an answer. */
  drop: () => void;
  /** Resolves after `ms`, or never once the peer stops. */
  wait: (ms: number) => Promise<void>;
};

export type HttpPeerServer = { baseUrl: string; port: number; stop: () => Promise<void> };

export function faultFor(setting: FaultSetting, requestIndex: number): RequestFault {
  return typeof setting === 'function' ? setting(requestIndex) : setting;
}

/** Parses a JSON body; `undefined` when it is not JSON (the peer answers with the provider's own error). */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Answers an accepted request as `fault` says, after the peer recorded what it accepted: the
 * normal reply, the same reply after a delay, a 5xx (`serverError`), or a dropped socket.
 */
export async function answerAccepted(
  exchange: PeerExchange,
  fault: RequestFault,
  reply: PeerReply,
  serverError: (status: 500 | 502 | 503) => PeerReply,
): Promise<Answered> {
  if (fault.kind === 'drop-after-accept') {
    exchange.drop();
    return 'dropped';
  }
  if (fault.kind === 'error-after-accept') {
    exchange.reply(serverError(fault.status ?? 500));
    return 'server-error';
  }
  if (fault.kind === 'delay') {
    await exchange.wait(fault.ms);
    exchange.reply(reply);
    return 'delayed';
  }
  exchange.reply(reply);
  return 'ok';
}

export async function startHttpPeerServer({
  port = 0,
  handle,
  name,
}: {
  port?: number;
  handle: (exchange: PeerExchange) => Promise<void> | void;
  name: string;
}): Promise<HttpPeerServer> {
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://peer');
      const exchange: PeerExchange = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks),
        host: req.headers.host ?? '',
        reply: ({ status, headers = {}, body }) => {
          if (res.writableEnded || res.destroyed) return;
          const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
          const type = body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' };
          res.writeHead(status, { ...type, ...headers });
          res.end(text);
        },
        drop: () => req.socket.destroy(),
        wait: (ms) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              timers.delete(timer);
              resolve();
            }, ms);
            timers.add(timer);
          }),
      };
      Promise.resolve(handle(exchange)).catch((error: unknown) => {
        // A bug in the peer itself: answer plainly so the test sees it, never hang.
        exchange.reply({ status: 599, body: `${name} peer failed: ${error instanceof Error ? error.message : String(error)}` });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${listening}`,
    port: listening,
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `predicate` until it holds (tests never sleep for timing). */
export async function waitUntil(predicate: () => boolean, name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${name} peer: condition not met in time`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A fault on the lookup endpoints (Postmark's Messages API, SendGrid's Email Logs), for the
 * provider reconciler's tests: a 5xx, or a 429 with Retry-After, instead of the answer.
 */
export type LookupFault = { kind: 'none' } | { kind: 'error'; status?: 500 | 502 | 503 } | { kind: 'throttle'; retryAfterSeconds?: number };

/** A per-item refusal rule: an error for a recipient (at its position in the call) refuses that item. */
export type RefusalRule<Refusal> = ((to: string, itemIndex: number) => Refusal | null) | null;

/** What every provider peer offers a test, whatever the provider. */
export type PeerControls<Message, Refusal> = {
  baseUrl: string;
  setFault: (fault: FaultSetting) => void;
  /** Per-item refusals by recipient; each peer says how its API reports them. */
  refuse: (rule: RefusalRule<Refusal>) => void;
  /** Every message the peer accepted, in order, however its request was answered. */
  messages: () => Message[];
  /** Messages accepted for one correlation: more than one is a duplicate send. */
  countByCorrelation: (correlation: string) => number;
  /** Requests received on the send endpoints, answered or not. */
  requests: () => number;
  setLookupFault: (fault: LookupFault) => void;
  /** Requests received on the lookup endpoints, answered or not. */
  lookups: () => number;
  waitFor: (predicate: () => boolean, timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
};

/** A peer's mutable state: the fault and refusal rule of the moment, what it accepted, how many requests it saw. */
export type PeerState<Message, Refusal> = {
  fault: FaultSetting;
  refusal: RefusalRule<Refusal>;
  stored: Message[];
  received: number;
  lookupFault: LookupFault;
  lookups: number;
};

export function createPeerState<Message, Refusal>(): PeerState<Message, Refusal> {
  return { fault: { kind: 'none' }, refusal: null, stored: [], received: 0, lookupFault: { kind: 'none' }, lookups: 0 };
}

/** Counts a lookup request and answers it with the lookup fault of the moment, if any (`error` builds the provider's error body); null: answer normally. */
export function lookupFaultReply<Message, Refusal>(
  state: PeerState<Message, Refusal>,
  error: (status: number, message: string) => PeerReply,
): PeerReply | null {
  state.lookups += 1;
  const fault = state.lookupFault;
  if (fault.kind === 'error') return error(fault.status ?? 500, 'Internal Server Error');
  if (fault.kind === 'throttle') {
    const reply = error(429, 'Rate limit exceeded.');
    return fault.retryAfterSeconds === undefined ? reply : { ...reply, headers: { ...reply.headers, 'retry-after': String(fault.retryAfterSeconds) } };
  }
  return null;
}

/** The first refusal the rule gives any of an item's recipients. */
export function refusalOf<Refusal>(rule: RefusalRule<Refusal>, recipients: string[], itemIndex: number): { to: string; refusal: Refusal } | null {
  for (const to of recipients) {
    const refusal = rule?.(to, itemIndex);
    if (refusal) return { to, refusal };
  }
  return null;
}

export function peerControls<Message extends { correlation: string | null }, Refusal>(
  state: PeerState<Message, Refusal>,
  server: HttpPeerServer,
  name: string,
): PeerControls<Message, Refusal> {
  return {
    baseUrl: server.baseUrl,
    setFault: (fault) => {
      state.fault = fault;
    },
    refuse: (rule) => {
      state.refusal = rule;
    },
    messages: () => [...state.stored],
    countByCorrelation: (correlation) => state.stored.filter((message) => message.correlation === correlation).length,
    requests: () => state.received,
    setLookupFault: (fault) => {
      state.lookupFault = fault;
    },
    lookups: () => state.lookups,
    waitFor: (predicate, timeoutMs) => waitUntil(predicate, name, timeoutMs),
    stop: server.stop,
  };
}

/** The error a call rejected with, narrowed by `guard`; fails when the call succeeds or throws something else. */
export async function rejection<E>(call: Promise<unknown>, guard: (error: unknown) => error is E): Promise<E> {
  try {
    await call;
  } catch (error) {
    if (guard(error)) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}
