import net from 'node:net';
import { Readable } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Phase } from '@/lib/transport/phases';
import { smtpData } from './smtp-data';

/**
 * Our own pool of SMTP connections over nodemailer's SMTPConnection (the protocol: greeting,
 * EHLO, STARTTLS, AUTH, MAIL/RCPT/DATA, dot-stuffing), replacing nodemailer's SMTPPool.
 *
 * Why not SMTPPool: with a custom `getSocket` (ours sets TCP_NODELAY, worth ~40 ms a send), a
 * refused connect calls the message's callback but leaves the PoolResource in the pool's
 * `_connections`, unavailable, forever (nodemailer 7.0.13 `pool-resource.js` connect: a getSocket
 * error returns without emitting `error` or `close`, the only two paths that remove it). After
 * `maxConnections` refused connects every later message waits in the pool's queue with no
 * timer: 20 notices due during a 150 s relay outage left 8 sends failed and 8 hung for good, the
 * worker's slots all held (issue 23, reproduced before this module). The pool also offers no way
 * to cancel a queued message, and its errors say `command: 'CONN'` for every lost connection,
 * before or after the body, so they cannot tell the phase.
 *
 * Here every send knows its phase (we drive each step), has a deadline per phase (connect;
 * greeting, each command and the final reply as the socket's idle timeout) and an overall one,
 * honours an abort signal (cancelled at once before the body, left to its deadline after), and a
 * connection that failed is never reused. The body phase starts when DATA is answered 354 and
 * nodemailer starts reading our message: before that no relay can hold the message.
 */

export type SmtpEndpoint = { host: string; port: number; secure: boolean; auth: { user: string; pass: string } | null };

export type SmtpFailure = { phase: Phase; code: number | null; response: string | null; errorClass: string };

export type SmtpResult = { ok: true; response: string } | { ok: false; failure: SmtpFailure };

export type SmtpMessage = { envelope: { from: string; to: string[] }; raw: Buffer };

export type SmtpPoolParams = {
  endpoint: SmtpEndpoint;
  /** Connect, greeting, each command, the reply to the body: the longest wait for any one step. */
  phaseTimeoutMs: number;
  /** One send from the first byte to the final reply, including opening a connection. */
  sendDeadlineMs: number;
  /** 0: one connection per message. */
  maxConnections: number;
  maxMessagesPerConnection?: number;
};

type Pooled = { conn: SMTPConnection; messages: number; closed: boolean };

type MailError = Error & { code?: string; responseCode?: number; response?: string; command?: string };

const errorOf = (error: unknown): MailError => (error instanceof Error ? error : new Error(String(error)));

function failureOf(phase: Phase, error: unknown): SmtpFailure {
  const err = errorOf(error);
  const code = typeof err.responseCode === 'number' && err.responseCode >= 200 && err.responseCode < 600 ? err.responseCode : null;
  const response = typeof err.response === 'string' ? err.response : null;
  // A reply read from a connection that then closed ("421 closing") is still the relay's answer.
  if (code !== null) return { phase, code, response, errorClass: `smtp_${code}` };
  if (err.code === 'ETLS' || phase === 'tls') return { phase: 'tls', code: null, response: null, errorClass: 'tls_failed' };
  if (err.code === 'EDNS') return { phase: 'dns', code: null, response: null, errorClass: 'dns_failed' };
  const timedOut = err.code === 'ETIMEDOUT';
  if (phase === 'connect') return { phase, code: null, response: null, errorClass: timedOut ? 'connect_timeout' : 'connect_failed' };
  if (phase === 'greeting') return { phase, code: null, response: null, errorClass: timedOut ? 'greeting_timeout' : 'connection_lost' };
  return { phase, code: null, response: null, errorClass: timedOut ? 'timeout' : 'connection_lost' };
}

/** Which step of the handshake a connection is in: a TLS upgrade under way, no reply yet (the greeting), or EHLO and after. */
function handshakePhase(conn: SMTPConnection): Phase {
  if ((conn as SMTPConnection & { upgrading?: boolean }).upgrading === true) return 'tls';
  return conn.lastServerResponse ? 'ehlo' : 'greeting';
}

export type SmtpPool = {
  send: (message: SmtpMessage, signal?: AbortSignal) => Promise<SmtpResult>;
  /** Connect, greeting, EHLO (STARTTLS), AUTH, QUIT: no message. What a breaker asks while a relay is down. */
  probe: () => Promise<SmtpResult>;
  /** Cuts every send in flight now, body or not (the worker's stop grace ran out). */
  cancelAll: () => void;
  close: () => void;
};

/** The parts of nodemailer's SMTPConnection (7.0.13, pinned) a pipelined send drives: its reply queue, its socket and its error form. */
type ConnectionInternals = SMTPConnection & {
  _supportedExtensions: string[];
  _responseActions: Array<(reply: string) => void>;
  _socket: net.Socket | null;
  _destroyed: boolean;
  _formatError: (message: string, type: string, response: string | false, command: string) => MailError;
  options: { lmtp?: boolean };
};

/** An address MAIL FROM and RCPT TO carry as it is: printable ASCII without `<`, `>` or space, stricter than nodemailer's own check (no CR, LF, `<` or `>`) and never SMTPUTF8; any other goes through nodemailer. */
const PLAIN_ADDRESS = /^[\x21-\x3b\x3d\x3f-\x7e]+$/;

/**
 * MAIL FROM, RCPT TO and DATA in one write where the relay advertises PIPELINING (RFC 2920),
 * then the body once DATA is answered: two round trips a message instead of nodemailer's four
 * (it pipelines only extra recipients), and two writes instead of five. Postfix's client does the
 * same. The replies come in order and each keeps nodemailer's error form (`command` MAIL FROM,
 * RCPT TO or DATA), so a refusal maps to the phase it did before; the body's bytes are the ones
 * nodemailer's DataStream would write (./smtp-data.ts). False when this connection or message
 * is not one it covers (no PIPELINING, LMTP, an address nodemailer would encode or refuse):
 * nodemailer's own send then runs.
 */
function sendPipelined(conn: SMTPConnection, message: SmtpMessage, onBody: () => void, done: (error: MailError | null, reply?: string) => void): boolean {
  const c = conn as ConnectionInternals;
  const { from, to } = message.envelope;
  if (!c._supportedExtensions.includes('PIPELINING') || c.options.lmtp || to.length !== 1 || !PLAIN_ADDRESS.test(from) || !PLAIN_ADDRESS.test(to[0] ?? ''))
    return false;
  const socket = c._socket;
  if (c._destroyed || !socket || socket.destroyed) {
    done(c._formatError('Connection is closed', 'ECONNECTION', false, 'API'));
    return true;
  }
  // The first refusal answers at once, as nodemailer's own send does; the pool then closes this
  // connection, and the replies still due to it find the send finished.
  let finished = false;
  const finish = (error: MailError | null, reply?: string) => {
    if (finished) return;
    finished = true;
    done(error, reply);
  };
  c._responseActions.push((reply) => {
    if (reply.charAt(0) !== '2') finish(c._formatError('Mail command failed', 'EENVELOPE', reply, 'MAIL FROM'));
  });
  c._responseActions.push((reply) => {
    if (reply.charAt(0) !== '2') finish(c._formatError('Recipient command failed', 'EENVELOPE', reply, 'RCPT TO'));
  });
  c._responseActions.push((reply) => {
    if (finished) return;
    if (!/^[23]/.test(reply)) return finish(c._formatError('Data command failed', 'EENVELOPE', reply, 'DATA'));
    c._responseActions.push((final) => (final.charAt(0) === '2' ? finish(null, final) : finish(c._formatError('Message failed', 'EMESSAGE', final, 'DATA'))));
    onBody();
    socket.write(smtpData(message.raw));
  });
  socket.write(`MAIL FROM:<${from}>\r\nRCPT TO:<${to[0] ?? ''}>\r\nDATA\r\n`);
  return true;
}

export function createSmtpPool({ endpoint, phaseTimeoutMs, sendDeadlineMs, maxConnections, maxMessagesPerConnection = 1_000 }: SmtpPoolParams): SmtpPool {
  const idle: Pooled[] = [];
  let open = 0;
  const waiting: Array<() => void> = [];
  const inFlight = new Set<() => void>();
  let closed = false;

  const discard = (pooled: Pooled) => {
    if (pooled.closed) return;
    pooled.closed = true;
    open -= 1;
    const at = idle.indexOf(pooled);
    if (at !== -1) idle.splice(at, 1);
    pooled.conn.close();
    waiting.shift()?.();
  };

  /** Runs one protocol step; a connection error, its end, the step's deadline or cancel fail it, with the step's phase. */
  const runStep = <T>(
    pooled: Pooled | null,
    phase: () => Phase,
    start: (settle: { ok: (value: T) => void; fail: (error: unknown) => void }) => void,
    cancel: AbortSignal,
  ) =>
    new Promise<{ ok: true; value: T } | { ok: false; failure: SmtpFailure }>((resolve) => {
      let settled = false;
      const finish = (result: { ok: true; value: T } | { ok: false; failure: SmtpFailure }) => {
        if (settled) return;
        settled = true;
        cancel.removeEventListener('abort', onAbort);
        if (pooled) {
          pooled.conn.off('error', onError);
          pooled.conn.off('end', onEnd);
        }
        resolve(result);
      };
      const onError = (error: unknown) => finish({ ok: false, failure: failureOf(phase(), error) });
      const onEnd = () => finish({ ok: false, failure: failureOf(phase(), new Error('connection closed')) });
      const onAbort = () => {
        const reason: unknown = cancel.reason;
        const at = phase();
        const deadline = reason instanceof Error && reason.name === 'TimeoutError';
        const errorClass = !deadline ? 'send_aborted' : at === 'connect' ? 'connect_timeout' : at === 'greeting' ? 'greeting_timeout' : 'timeout';
        finish({ ok: false, failure: { ...failureOf(at, reason), errorClass } });
      };
      if (cancel.aborted) {
        onAbort();
        return;
      }
      cancel.addEventListener('abort', onAbort, { once: true });
      if (pooled) {
        pooled.conn.on('error', onError);
        pooled.conn.once('end', onEnd);
      }
      start({ ok: (value) => finish({ ok: true, value }), fail: onError });
    });

  const connectSocket = (cancel: AbortSignal) =>
    runStep<net.Socket>(
      null,
      () => 'connect',
      (settle) => {
        const socket = net.connect({ host: endpoint.host, port: endpoint.port });
        // Nagle's algorithm held the message body until the relay's delayed ACK: ~40 ms a send on Linux.
        socket.setNoDelay(true);
        const timer = setTimeout(() => fail(Object.assign(new Error('connect timeout'), { code: 'ETIMEDOUT' })), phaseTimeoutMs);
        const onCancel = () => fail(new Error('cancelled'));
        cancel.addEventListener('abort', onCancel, { once: true });
        function fail(error: Error) {
          clearTimeout(timer);
          cancel.removeEventListener('abort', onCancel);
          socket.destroy();
          settle.fail(error);
        }
        socket.once('error', fail);
        socket.once('connect', () => {
          clearTimeout(timer);
          cancel.removeEventListener('abort', onCancel);
          socket.off('error', fail);
          settle.ok(socket);
        });
      },
      cancel,
    );

  /** A new connection through greeting, EHLO (STARTTLS) and AUTH, or the phase it failed in. */
  const openConnection = async (cancel: AbortSignal): Promise<{ ok: true; pooled: Pooled } | { ok: false; failure: SmtpFailure }> => {
    open += 1;
    const socket = await connectSocket(cancel);
    if (!socket.ok) {
      open -= 1;
      waiting.shift()?.();
      return socket;
    }
    const conn = new SMTPConnection({
      host: endpoint.host,
      port: endpoint.port,
      secure: endpoint.secure,
      connection: socket.value,
      connectionTimeout: phaseTimeoutMs,
      greetingTimeout: phaseTimeoutMs,
      // Idle time on the socket: each command waits for its reply with nothing flowing.
      socketTimeout: phaseTimeoutMs,
    });
    const pooled: Pooled = { conn, messages: 0, closed: false };
    // Errors after a step finished (an idle connection dropped) only retire the connection; a
    // microtask later, so a step in progress hears the error itself before close() ends the socket.
    conn.on('error', () => queueMicrotask(() => discard(pooled)));
    conn.once('end', () => queueMicrotask(() => discard(pooled)));
    // Greeting, EHLO, STARTTLS and the second EHLO: each reply within the idle timeout, all of them within two.
    const handshake = AbortSignal.any([cancel, AbortSignal.timeout(2 * phaseTimeoutMs)]);
    const connected = await runStep<void>(
      pooled,
      () => handshakePhase(conn),
      (settle) => conn.connect((error) => (error ? settle.fail(error) : settle.ok(undefined))),
      handshake,
    );
    if (!connected.ok) {
      discard(pooled);
      return connected;
    }
    const advertisesAuth = (conn as SMTPConnection & { allowsAuth?: boolean }).allowsAuth === true;
    if (endpoint.auth && advertisesAuth) {
      const credentials = endpoint.auth;
      const loggedIn = await runStep<void>(
        pooled,
        () => 'auth',
        (settle) => conn.login({ credentials }, (error) => (error ? settle.fail(error) : settle.ok(undefined))),
        cancel,
      );
      if (!loggedIn.ok) {
        discard(pooled);
        return loggedIn;
      }
    }
    return { ok: true, pooled };
  };

  /** An idle connection, a new one, or the first to come back; cancelled with `cancel`. */
  const acquire = async (cancel: AbortSignal): Promise<{ ok: true; pooled: Pooled; reused: boolean } | { ok: false; failure: SmtpFailure }> => {
    for (;;) {
      const reusable = idle.pop();
      if (reusable) return { ok: true, pooled: reusable, reused: true };
      if (maxConnections === 0 || open < maxConnections) {
        const opened = await openConnection(cancel);
        return opened.ok ? { ok: true, pooled: opened.pooled, reused: false } : opened;
      }
      const freed = await new Promise<boolean>((resolve) => {
        const wake = () => {
          cancel.removeEventListener('abort', onCancel);
          resolve(true);
        };
        const onCancel = () => {
          const at = waiting.indexOf(wake);
          if (at !== -1) waiting.splice(at, 1);
          resolve(false);
        };
        waiting.push(wake);
        cancel.addEventListener('abort', onCancel, { once: true });
      });
      if (!freed) return { ok: false, failure: { phase: 'connect', code: null, response: null, errorClass: 'pool_busy' } };
    }
  };

  const giveBack = (pooled: Pooled) => {
    if (pooled.closed) return;
    pooled.messages += 1;
    if (closed || maxConnections === 0 || pooled.messages >= maxMessagesPerConnection) {
      pooled.closed = true;
      open -= 1;
      pooled.conn.quit();
      waiting.shift()?.();
      return;
    }
    idle.push(pooled);
    waiting.shift()?.();
  };

  const transmit = async (pooled: Pooled, message: SmtpMessage, cancel: AbortSignal, cutoff: AbortSignal): Promise<SmtpResult> => {
    let phase: Phase = 'mail_from';
    // Before the body, an abort cuts the send at once (nothing can have left); after 354 only the
    // deadline or the stop cut-off does, so a healthy relay's reply is not thrown away.
    const bodyGuard = new AbortController();
    const onCancel = () => {
      if (phase !== 'body') bodyGuard.abort(cancel.reason);
    };
    cancel.addEventListener('abort', onCancel, { once: true });
    const onCutoff = () => bodyGuard.abort(cutoff.reason);
    cutoff.addEventListener('abort', onCutoff, { once: true });
    if (cancel.aborted) onCancel();
    if (cutoff.aborted) onCutoff();
    const result = await runStep<string>(
      pooled,
      () => phase,
      (settle) => {
        const finished = (error: MailError | null, reply?: string) => {
          if (error) {
            // An envelope refusal names its command, and nodemailer then drains our message into
            // a sink (which read() takes for the body): the command wins over the flag.
            const { command, code } = error;
            if (command === 'MAIL FROM') phase = 'mail_from';
            else if (command === 'RCPT TO') phase = 'rcpt_to';
            else if (command === 'DATA' && code === 'EENVELOPE') phase = 'data';
            else if (command === 'API' && code === 'EENVELOPE') {
              // An address nodemailer will not put in RCPT TO (checked at scheduling, so rare): refused for this recipient, as a 553 would be.
              settle.fail(Object.assign(new Error('invalid address'), { responseCode: 553, response: '553 invalid address' }));
              return;
            } else if (command === 'API') phase = 'mail_from';
            settle.fail(error);
            return;
          }
          settle.ok(reply ?? '');
        };
        if (sendPipelined(pooled.conn, message, () => (phase = 'body'), finished)) return;
        const body = new Readable({
          read() {
            phase = 'body';
            this.push(message.raw);
            this.push(null);
          },
        });
        pooled.conn.send(message.envelope, body, (error, info) =>
          error ? finished(error) : finished(null, typeof info.response === 'string' ? info.response : ''),
        );
      },
      bodyGuard.signal,
    );
    cancel.removeEventListener('abort', onCancel);
    cutoff.removeEventListener('abort', onCutoff);
    return result.ok ? { ok: true, response: result.value } : { ok: false, failure: result.failure };
  };

  const send = async (message: SmtpMessage, signal?: AbortSignal): Promise<SmtpResult> => {
    if (closed) return { ok: false, failure: { phase: 'connect', code: null, response: null, errorClass: 'transport_closed' } };
    // The cut-off (the deadline, or cancelAll) also cancels; the caller's signal only cancels.
    // Two controllers and a timer cleared at the end, rather than AbortSignal.timeout and two
    // AbortSignal.any: those left each send's deadline timer running for its whole length after
    // the send, and a weak reference and a finalization registration per source (~1 300 timers
    // alive in a 1 × 64 worker's heap; issue 27).
    const cutoffController = new AbortController();
    const cancelController = new AbortController();
    const cutoff = cutoffController.signal;
    const cancel = cancelController.signal;
    const stopWith = (reason: unknown) => {
      cutoffController.abort(reason);
      cancelController.abort(reason);
    };
    const deadline = setTimeout(() => stopWith(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), sendDeadlineMs);
    deadline.unref();
    const onSignal = () => cancelController.abort(signal?.reason);
    if (signal?.aborted) onSignal();
    else signal?.addEventListener('abort', onSignal, { once: true });
    const cut = () => stopWith(new Error('send cut off'));
    inFlight.add(cut);
    try {
      // A connection the relay closed while idle fails before the body: one more try on a fresh one costs nothing.
      for (let tries = 0; ; tries += 1) {
        const leased = await acquire(cancel);
        if (!leased.ok) return leased;
        const result = await transmit(leased.pooled, message, cancel, cutoff);
        if (result.ok) {
          giveBack(leased.pooled);
          return result;
        }
        discard(leased.pooled);
        const stale = leased.reused && result.failure.code === null && result.failure.phase === 'mail_from' && result.failure.errorClass === 'connection_lost';
        if (!stale || tries > 0 || cancel.aborted) return result;
      }
    } finally {
      inFlight.delete(cut);
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onSignal);
    }
  };

  const probe = async (): Promise<SmtpResult> => {
    const cancel = AbortSignal.timeout(sendDeadlineMs);
    const opened = await openConnection(cancel);
    if (!opened.ok) return opened;
    opened.pooled.closed = true;
    open -= 1;
    opened.pooled.conn.quit();
    return { ok: true, response: 'probe' };
  };

  return {
    send,
    probe,
    cancelAll: () => {
      for (const cut of [...inFlight]) cut();
    },
    close: () => {
      closed = true;
      for (const pooled of [...idle]) {
        discard(pooled);
      }
    },
  };
}
