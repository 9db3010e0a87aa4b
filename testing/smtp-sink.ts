import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { signGenericRequest } from '@/lib/events/generic-signature';
import { correlationFromMessageId } from '@/lib/ledger/notice-key';

/**
 * A real SMTP peer for tests, chaos runs and `npm run demo`. It speaks SMTP over TCP through
 * smtp-server, so the client side (nodemailer) meets every real failure: a 4xx/5xx reply, a
 * reply that never comes, a connection cut after the message was handed over.
 *
 * What counts as "received": a message is in `messages()` once the peer holds all of it AND
 * has either accepted it (`outcome: 'accepted'`, after a 250) or was told to drop the
 * connection after reading it (`outcome: 'dropped-after-data'`: the client never learns the
 * result, but the mail may be out — exactly the unknown-outcome case the ledger guards).
 * A rejected message is never in `messages()` (see `rejections()`). A stalled message is in
 * `stalled()` until it is released or its `ms` passes; then it is accepted — even if the
 * client gave up and hung up meanwhile, because a real relay that has the bytes may still
 * deliver them.
 *
 * Chaos runs use a `per-message` fault: a callback decides each message's fault at DATA from
 * its correlation and how often that correlation reached DATA before, so a seeded decision
 * does not depend on the order in which concurrent workers arrive.
 */

export type SinkFault =
  | { kind: 'none' }
  | { kind: 'reject'; code: 451 | 550; times?: number; at?: 'data' | 'rcpt' }
  | { kind: 'stall'; ms?: number; times?: number }
  | { kind: 'drop-after-data'; times?: number }
  /** AUTH answered `535 5.7.8 Authentication credentials invalid`, whatever the credentials (needs the `auth` option). */
  | { kind: 'refuse-auth' }
  | { kind: 'per-message'; decide: (message: FaultContext) => MessageFault };

/** What a `per-message` fault decision sees at the end of DATA. */
export type FaultContext = {
  correlation: string | null;
  to: string[];
  /** How many earlier messages with this correlation reached the end of DATA (0 on the first). */
  previousAttempts: number;
};

export type MessageFault = { kind: 'none' } | { kind: 'reject'; code: 451 | 550 } | { kind: 'stall'; ms?: number } | { kind: 'drop-after-data' };

export type SinkEventType = 'accepted' | 'delivered';

export type SunkMessage = {
  queueId: string;
  outcome: 'accepted' | 'dropped-after-data';
  messageId: string | null;
  /** X-Notice-Correlation, else derived from our Message-ID, else null. */
  correlation: string | null;
  from: string | null;
  /** Envelope recipients (RCPT TO), lower-cased. */
  to: string[];
  subject: string | null;
  headers: Record<string, string>;
  receivedAt: Date;
  size: number;
  /** The raw message, for inspection in tests only: never log it. */
  raw: string;
};

/** `raw`: the message a DATA-stage rejection refused (it reached the peer; tests compare it with a later resend). Never log it. */
export type SinkRejection = { code: number; stage: 'data' | 'rcpt'; correlation: string | null; to: string[]; at: Date; raw?: string };

export type PostedEvents = { queueId: string; status: number | null; error?: string };

export type SmtpSinkOptions = {
  /** 0 or undefined: a free port. */
  port?: number;
  host?: string;
  /** When set, signed events (generic format) are POSTed here after each accepted message. */
  eventsUrl?: string;
  eventsSecret?: string;
  eventDelayMs?: number;
  /** Which events to post per accepted message and recipient. */
  eventTypes?: SinkEventType[];
  /**
   * Recipients whose mailbox does not exist: RCPT TO is answered as Postfix does,
   * `550 5.1.1 <addr>: Recipient address rejected: User unknown in local recipient table`.
   */
  unknownMailboxes?: (recipient: string) => boolean;
  /** Recipients for which a hard bounce is posted instead of the events above. */
  bounce?: (recipient: string) => boolean;
  /** Largest message kept in memory; larger ones are answered 552. */
  maxBytes?: number;
  /** Pauses between attempts to post an event batch that failed with no answer or a 5xx. */
  eventRetryDelaysMs?: number[];
  /**
   * Also post events for dropped-after-data messages. Off by default; chaos runs turn it on:
   * the relay holds the whole message, so a real provider would deliver it and report it.
   */
  eventsForDropped?: boolean;
  /** Offer AUTH (PLAIN, LOGIN, over plain TCP) and require these credentials before MAIL FROM. */
  auth?: { user: string; pass: string };
  /** Advertise PIPELINING (RFC 2920), as smtp-server and most relays do; false for a relay that does not. */
  pipelining?: boolean;
  /** Every chunk the peer reads from its clients, in order: how the client wrote its commands. */
  onClientBytes?: (chunk: Buffer) => void;
};

export type SmtpSink = {
  port: number;
  url: string;
  messages: () => SunkMessage[];
  stalled: () => SunkMessage[];
  rejections: () => SinkRejection[];
  /** Messages received by the peer (accepted or dropped-after-data) carrying this correlation. */
  countByCorrelation: (correlation: string) => number;
  countByMessageId: (messageId: string) => number;
  setFault: (fault: SinkFault) => void;
  /** Stops listening and cuts every connection: a relay that is down, its port refusing connects. */
  goDown: () => Promise<void>;
  /** Listens again on the same port (the relay is back); `messages()` and the rest are kept. */
  comeBack: () => Promise<void>;
  /** Accepts every stalled message now (250 to the client if it is still connected). */
  releaseStalled: () => number;
  /** Refuses every stalled message now with `code` (a relay that took its time to say no); it joins `rejections()`. */
  rejectStalled: (code: 451 | 550) => number;
  /** Resolves with messages() once `count` messages are received or `predicate` holds. */
  waitFor: (condition: number | ((messages: SunkMessage[]) => boolean), timeoutMs?: number) => Promise<SunkMessage[]>;
  /** Resolves when every scheduled event POST has finished. */
  flushEvents: () => Promise<void>;
  postedEvents: () => PostedEvents[];
  stop: () => Promise<void>;
};

type SinkEvent = {
  id: string;
  type: SinkEventType | 'bounce';
  correlation: string | null;
  messageId: string | null;
  providerMessageId: string;
  recipient: string;
  occurredAt: string;
  bounceType?: 'hard';
};

type Held = { message: SunkMessage; finish: () => void; refuse: (code: 451 | 550) => void; timer: NodeJS.Timeout | null };

function unfoldHeaders(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const lines = head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/);
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** RFC 2047 encoded words, enough for subjects nodemailer writes. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=\s*/g, (_whole, _charset: string, encoding: string, text: string) => {
    if (encoding.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
    const bytes = text.replace(/_/g, ' ').replace(/=([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}

export function parseSunkMessage({
  raw,
  to,
  from,
  queueId,
}: {
  raw: string;
  to: string[];
  from: string | null;
  queueId: string;
}): Omit<SunkMessage, 'outcome' | 'receivedAt'> {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = unfoldHeaders(split === -1 ? raw : raw.slice(0, split));
  const messageId = headers['message-id'] ?? null;
  const tagged = headers['x-notice-correlation']?.trim().toLowerCase();
  const correlation = tagged && /^[0-9a-f]{32}$/.test(tagged) ? tagged : messageId ? correlationFromMessageId(messageId) : null;
  return {
    queueId,
    messageId,
    correlation,
    from,
    to,
    subject: headers.subject === undefined ? null : decodeWords(headers.subject),
    headers,
    size: Buffer.byteLength(raw, 'utf8'),
    raw,
  };
}

function smtpError(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

export async function startSmtpSink({
  port = 0,
  host = '127.0.0.1',
  eventsUrl,
  eventsSecret,
  eventDelayMs = 200,
  eventTypes = ['accepted', 'delivered'],
  bounce,
  unknownMailboxes,
  maxBytes = 10 * 1024 * 1024,
  eventRetryDelaysMs = [250, 1_000, 3_000, 10_000],
  eventsForDropped = false,
  auth,
  pipelining = true,
  onClientBytes,
}: SmtpSinkOptions = {}): Promise<SmtpSink> {
  if (eventsUrl && (!eventsSecret || eventsSecret.length < 32)) {
    throw new Error('startSmtpSink: eventsSecret (at least 32 characters) is required with eventsUrl');
  }
  const received: SunkMessage[] = [];
  const held = new Map<string, Held>();
  const rejected: SinkRejection[] = [];
  const posted: PostedEvents[] = [];
  const pendingPosts = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  const retryTimers = new Map<NodeJS.Timeout, () => void>();
  const sockets = new Map<number, Socket>();
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  let fault: SinkFault = { kind: 'none' };
  let faultUses = 0;
  const attemptsByCorrelation = new Map<string, number>();
  let stopped = false;

  /** The fault that applies to this message (or RCPT), consuming one of its `times`. */
  const takeFault = (stage: 'rcpt' | 'data'): SinkFault => {
    const current = fault;
    if (current.kind === 'none') return current;
    if (current.kind === 'per-message' || current.kind === 'refuse-auth') return { kind: 'none' };
    const faultStage = current.kind === 'reject' ? (current.at ?? 'data') : 'data';
    if (faultStage !== stage) return { kind: 'none' };
    faultUses += 1;
    if (current.times !== undefined && faultUses >= current.times) {
      fault = { kind: 'none' };
      faultUses = 0;
    }
    return current;
  };

  const decideFor = (decide: (message: FaultContext) => MessageFault, parsed: { correlation: string | null; to: string[] }): MessageFault => {
    const previousAttempts = parsed.correlation ? (attemptsByCorrelation.get(parsed.correlation) ?? 0) : 0;
    if (parsed.correlation) attemptsByCorrelation.set(parsed.correlation, previousAttempts + 1);
    return decide({ correlation: parsed.correlation, to: parsed.to, previousAttempts });
  };

  const schedulePost = (message: SunkMessage) => {
    if (!eventsUrl || !eventsSecret) return;
    const url = eventsUrl;
    const secret = eventsSecret;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const events = message.to.flatMap((recipient, index): SinkEvent[] => {
        const base = {
          correlation: message.correlation,
          messageId: message.messageId,
          providerMessageId: message.queueId,
          recipient,
          occurredAt: new Date().toISOString(),
        };
        if (bounce?.(recipient)) {
          return [{ ...base, id: `${message.queueId}.${index}.bounce`, type: 'bounce', bounceType: 'hard' }];
        }
        return eventTypes.map((type) => ({ ...base, id: `${message.queueId}.${index}.${type}`, type }));
      });
      const body = JSON.stringify({ events });
      const post = (async () => {
        // Like a real provider, retry a refused connection or a 5xx (the console may still be
        // starting in `npm run demo`); a 4xx is final. Each attempt is signed afresh.
        for (let attempt = 0; ; attempt += 1) {
          let outcome: PostedEvents;
          try {
            const response = await fetch(url, { method: 'POST', headers: signGenericRequest({ secret, body }), body, signal: AbortSignal.timeout(10_000) });
            await response.arrayBuffer().catch(() => undefined);
            outcome = { queueId: message.queueId, status: response.status };
          } catch (error) {
            outcome = { queueId: message.queueId, status: null, error: error instanceof Error ? error.message : String(error) };
          }
          const retryable = outcome.status === null || outcome.status >= 500;
          const delay = eventRetryDelaysMs[attempt];
          if (!retryable || delay === undefined || stopped) {
            posted.push(outcome);
            break;
          }
          await new Promise<void>((resolve) => {
            const retry = setTimeout(() => {
              retryTimers.delete(retry);
              resolve();
            }, delay);
            retryTimers.set(retry, resolve);
          });
          if (stopped) {
            posted.push(outcome);
            break;
          }
        }
        changes.emit('change');
      })();
      pendingPosts.add(post);
      void post.finally(() => pendingPosts.delete(post));
    }, eventDelayMs);
    timers.add(timer);
  };

  const record = (message: SunkMessage) => {
    received.push(message);
    changes.emit('change');
    if (message.outcome === 'accepted' || eventsForDropped) schedulePost(message);
  };

  const server = new SMTPServer({
    logger: false,
    authOptional: !auth,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(credentials, _session, callback) {
      if (fault.kind === 'refuse-auth' || !auth || credentials.username !== auth.user || credentials.password !== auth.pass) {
        callback(smtpError(535, '5.7.8 Authentication credentials invalid'));
        return;
      }
      callback(null, { user: credentials.username });
    },
    hideSTARTTLS: true,
    hidePIPELINING: !pipelining,
    size: maxBytes,
    closeTimeout: 1_000,
    onRcptTo(address, _session, callback) {
      if (unknownMailboxes?.(address.address.toLowerCase())) {
        rejected.push({ code: 550, stage: 'rcpt', correlation: null, to: [address.address.toLowerCase()], at: new Date() });
        changes.emit('change');
        callback(smtpError(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown in local recipient table`));
        return;
      }
      const current = takeFault('rcpt');
      if (current.kind === 'reject') {
        rejected.push({ code: current.code, stage: 'rcpt', correlation: null, to: [address.address.toLowerCase()], at: new Date() });
        changes.emit('change');
        callback(smtpError(current.code, current.code === 451 ? 'Try again later' : 'Mailbox unavailable'));
        return;
      }
      callback();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          callback(smtpError(552, 'Message exceeds fixed maximum message size'));
          return;
        }
        const queueId = randomBytes(8).toString('hex').toUpperCase();
        const parsed = parseSunkMessage({
          raw: Buffer.concat(chunks).toString('utf8'),
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
          queueId,
        });
        const current = fault.kind === 'per-message' ? decideFor(fault.decide, parsed) : takeFault('data');
        if (current.kind === 'reject') {
          rejected.push({ code: current.code, stage: 'data', correlation: parsed.correlation, to: parsed.to, at: new Date(), raw: parsed.raw });
          changes.emit('change');
          callback(smtpError(current.code, current.code === 451 ? 'Try again later' : 'Message rejected'));
          return;
        }
        if (current.kind === 'drop-after-data') {
          record({ ...parsed, outcome: 'dropped-after-data', receivedAt: new Date() });
          const socket = sockets.get(session.remotePort);
          if (socket) socket.destroy();
          return;
        }
        const accept = () => {
          record({ ...parsed, outcome: 'accepted', receivedAt: new Date() });
          callback(null, `Ok: queued as ${queueId}`);
        };
        if (current.kind === 'stall') {
          const hold: Held = {
            message: { ...parsed, outcome: 'accepted', receivedAt: new Date() },
            finish: () => {
              if (!held.delete(queueId)) return;
              if (hold.timer) clearTimeout(hold.timer);
              accept();
            },
            refuse: (code) => {
              if (!held.delete(queueId)) return;
              if (hold.timer) clearTimeout(hold.timer);
              rejected.push({ code, stage: 'data', correlation: parsed.correlation, to: parsed.to, at: new Date(), raw: parsed.raw });
              changes.emit('change');
              callback(smtpError(code, code === 451 ? 'Try again later' : 'Message rejected'));
            },
            timer: null,
          };
          if (current.ms !== undefined) hold.timer = setTimeout(hold.finish, current.ms);
          held.set(queueId, hold);
          changes.emit('change');
          return;
        }
        accept();
      });
    },
  });
  server.server.on('connection', (socket: Socket) => {
    if (onClientBytes) socket.on('data', onClientBytes);
    const remotePort = socket.remotePort;
    if (remotePort === undefined) return;
    sockets.set(remotePort, socket);
    socket.once('close', () => sockets.delete(remotePort));
  });
  server.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  let down = false;

  const messages = () => [...received];
  const matchesMessageId = (given: string, wanted: string) => given.replace(/^<|>$/g, '') === wanted.replace(/^<|>$/g, '');

  return {
    port: boundPort,
    url: `smtp://${host}:${boundPort}`,
    messages,
    stalled: () => [...held.values()].map((hold) => hold.message),
    rejections: () => [...rejected],
    countByCorrelation: (correlation) => received.filter((message) => message.correlation === correlation).length,
    countByMessageId: (messageId) => received.filter((message) => message.messageId !== null && matchesMessageId(message.messageId, messageId)).length,
    setFault: (next) => {
      fault = next;
      faultUses = 0;
    },
    goDown: async () => {
      if (down) return;
      down = true;
      const closedServer = new Promise<void>((resolve) => server.server.close(() => resolve()));
      for (const socket of sockets.values()) socket.destroy();
      await closedServer;
    },
    comeBack: async () => {
      if (!down) return;
      await new Promise<void>((resolve, reject) => {
        server.server.once('error', reject);
        server.server.listen(boundPort, host, () => {
          server.server.off('error', reject);
          resolve();
        });
      });
      down = false;
    },
    releaseStalled: () => {
      const all = [...held.values()];
      for (const hold of all) hold.finish();
      return all.length;
    },
    rejectStalled: (code) => {
      const all = [...held.values()];
      for (const hold of all) hold.refuse(code);
      return all.length;
    },
    waitFor: (condition, timeoutMs = 5_000) => {
      const satisfied = () => (typeof condition === 'number' ? received.length >= condition : condition(messages()));
      if (satisfied()) return Promise.resolve(messages());
      return new Promise((resolve, reject) => {
        const onChange = () => {
          if (!satisfied()) return;
          clearTimeout(timer);
          changes.off('change', onChange);
          resolve(messages());
        };
        const timer = setTimeout(() => {
          changes.off('change', onChange);
          reject(new Error(`smtp sink: condition not met within ${timeoutMs} ms (${received.length} messages received)`));
        }, timeoutMs);
        changes.on('change', onChange);
      });
    },
    flushEvents: async () => {
      while (timers.size > 0 || pendingPosts.size > 0) {
        if (pendingPosts.size > 0) await Promise.allSettled([...pendingPosts]);
        else await new Promise<void>((resolve) => changes.once('change', () => resolve()));
      }
    },
    postedEvents: () => [...posted],
    stop: async () => {
      if (stopped) return;
      stopped = true;
      for (const hold of held.values()) if (hold.timer) clearTimeout(hold.timer);
      held.clear();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const [timer, wake] of retryTimers) {
        clearTimeout(timer);
        wake();
      }
      retryTimers.clear();
      await Promise.allSettled([...pendingPosts]);
      for (const socket of sockets.values()) socket.destroy();
      if (down) return;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP peer that accepts connections and never says a word: a relay whose greeting never comes. */
export async function startSilentPeer(): Promise<{ port: number; connections: () => number; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    connections: () => accepted,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
