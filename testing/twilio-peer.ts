import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Twilio Programmable Messaging peer for tests and the demo. It speaks Twilio's REST
 * shapes: form-encoded `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` with HTTP Basic
 * auth (AccountSid:AuthToken), the documented 201 Message resource (sid `SM…`, status `queued`)
 * and error bodies `{code, message, more_info, status}`; it then posts status callbacks to the
 * message's `StatusCallback`, signed `X-Twilio-Signature` as Twilio documents (the full URL, then
 * every POST parameter sorted by name as name+value, HMAC-SHA1 with the auth token, base64).
 * It counts messages per correlation (the `c` query parameter of the StatusCallback URL).
 *
 * Faults: `timeout` (the message is created — it will be delivered — but the request is never
 * answered), `status` (an HTTP error before the message exists: 429/20429, 5xx), `refuse` (a
 * documented refusal code: 21211, 21610, 21614), `undelivered` (created, then the carrier fails
 * it); callbacks can be dropped, duplicated or reordered.
 */

export type TwilioFault =
  | { kind: 'none' }
  | { kind: 'timeout' }
  | { kind: 'status'; status: 429 | 500 | 503; code?: number }
  | { kind: 'refuse'; code: 21211 | 21610 | 21614 }
  | { kind: 'undelivered'; errorCode?: number };

export type CallbackMode = 'normal' | 'drop' | 'duplicate' | 'reorder';

export type PeerMessage = {
  sid: string;
  to: string;
  from: string | null;
  messagingServiceSid: string | null;
  body: string;
  statusCallback: string | null;
  correlation: string | null;
  status: string;
  createdAt: Date;
};

export type TwilioPeer = {
  /** What TWILIO_API_BASE_URL is set to. */
  baseUrl: string;
  accountSid: string;
  authToken: string;
  setFault: (fault: TwilioFault | ((to: string, index: number, correlation: string | null) => TwilioFault)) => void;
  setCallbacks: (mode: CallbackMode | ((message: PeerMessage) => CallbackMode)) => void;
  /** Numbers that replied STOP: a send to one is refused 21610. */
  unsubscribe: (phone: string) => void;
  messages: () => PeerMessage[];
  countByCorrelation: (correlation: string) => number;
  /** Requests received on the Messages endpoint, answered or not. */
  requests: () => number;
  /** Callback deliveries made: url, params, the status our route answered. */
  callbacks: () => { url: string; params: Record<string, string>; status: number }[];
  /** Waits until every scheduled callback was posted. */
  settle: () => Promise<void>;
  /** Posts a signed inbound message (Twilio's incoming-message webhook) to `url`. */
  sendInbound: (url: string, { from, to, body }: { from: string; to: string; body: string }) => Promise<number>;
  waitFor: (predicate: () => boolean, timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
};

/** Twilio's signature, computed exactly as its "Webhooks security" guide describes. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((text, name) => text + name + params[name], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

export async function postSigned(authToken: string, url: string, params: Record<string, string>, signature?: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      'x-twilio-signature': signature ?? twilioSignature(authToken, url, params),
      'user-agent': 'TwilioProxy/1.1',
    },
    body: new URLSearchParams(params).toString(),
  });
  await response.arrayBuffer();
  return response.status;
}

const errorText: Record<number, string> = {
  20003: 'Authenticate',
  20429: 'Too Many Requests',
  21211: "Invalid 'To' Phone Number",
  21602: 'Message body is required.',
  21604: "A 'To' phone number is required.",
  21603: "A 'From' phone number is required.",
  21610: 'Attempt to send to unsubscribed recipient',
  21614: "'To' number is not a valid mobile number",
};

function sid(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}

export async function startTwilioPeer({
  accountSid = `AC${'0'.repeat(24)}${randomBytes(4).toString('hex')}`,
  authToken = randomBytes(16).toString('hex'),
  callbackDelayMs = 20,
  port = 0,
}: { accountSid?: string; authToken?: string; callbackDelayMs?: number; port?: number } = {}): Promise<TwilioPeer> {
  let fault: TwilioFault | ((to: string, index: number, correlation: string | null) => TwilioFault) = { kind: 'none' };
  let callbackMode: CallbackMode | ((message: PeerMessage) => CallbackMode) = 'normal';
  const stopped = new Set<string>();
  const stored: PeerMessage[] = [];
  const delivered: { url: string; params: Record<string, string>; status: number }[] = [];
  const pending = new Set<Promise<void>>();
  const hanging = new Set<http.ServerResponse>();
  let received = 0;

  const fail = (res: http.ServerResponse, status: number, code: number, detail?: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code, message: detail ?? errorText[code] ?? 'Error', more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
  };

  const schedule = (message: PeerMessage, statuses: { status: string; errorCode?: number }[]) => {
    const mode = typeof callbackMode === 'function' ? callbackMode(message) : callbackMode;
    if (!message.statusCallback || mode === 'drop') return;
    let sequence = statuses;
    if (mode === 'duplicate') sequence = statuses.flatMap((step) => [step, step]);
    if (mode === 'reorder') sequence = [...statuses].reverse();
    const url = message.statusCallback;
    const run = (async () => {
      for (const step of sequence) {
        await new Promise((resolve) => setTimeout(resolve, callbackDelayMs));
        const params: Record<string, string> = {
          AccountSid: accountSid,
          ApiVersion: '2010-04-01',
          From: message.from ?? '+15005550006',
          MessageSid: message.sid,
          MessageStatus: step.status,
          SmsSid: message.sid,
          SmsStatus: step.status,
          To: message.to,
          ...(message.messagingServiceSid ? { MessagingServiceSid: message.messagingServiceSid } : {}),
          ...(step.errorCode ? { ErrorCode: String(step.errorCode) } : {}),
        };
        message.status = step.status;
        let status = 0;
        try {
          status = await postSigned(authToken, url, params);
        } catch {
          status = 0;
        }
        delivered.push({ url, params, status });
      }
    })();
    pending.add(run);
    void run.finally(() => pending.delete(run));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://peer').pathname;
      const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, pass] = auth?.[1] ? Buffer.from(auth[1], 'base64').toString('utf8').split(':') : [];
      // GET /2010-04-01/Accounts/{AccountSid}.json: the account resource (what a transport probe reads).
      const account = /^\/2010-04-01\/Accounts\/([^/]+)\.json$/.exec(path);
      if (account && req.method === 'GET') {
        if (user !== accountSid || pass !== authToken || account[1] !== accountSid) return fail(res, 401, 20003);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            sid: accountSid,
            friendly_name: 'notice-ledger test account',
            status: 'active',
            type: 'Full',
            uri: `/2010-04-01/Accounts/${accountSid}.json`,
          }),
        );
        return;
      }
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(path);
      if (!match || req.method !== 'POST') return fail(res, 404, 20404, 'The requested resource was not found');
      if (user !== accountSid || pass !== authToken || match[1] !== accountSid) return fail(res, 401, 20003);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const index = received;
      received += 1;
      const to = form.get('To') ?? '';
      const body = form.get('Body') ?? '';
      const from = form.get('From');
      const messagingServiceSid = form.get('MessagingServiceSid');
      const statusCallback = form.get('StatusCallback');
      let correlation: string | null = null;
      try {
        correlation = statusCallback ? new URL(statusCallback).searchParams.get('c') : null;
      } catch {
        correlation = null;
      }
      const current = typeof fault === 'function' ? fault(to, index, correlation) : fault;
      if (current.kind === 'status')
        return fail(
          res,
          current.status,
          current.code ?? (current.status === 429 ? 20429 : 20500),
          current.status === 429 ? 'Too Many Requests' : 'Internal Server Error',
        );
      if (!to) return fail(res, 400, 21604);
      if (!body) return fail(res, 400, 21602);
      if (!from && !messagingServiceSid) return fail(res, 400, 21603);
      if (!/^\+[1-9]\d{6,14}$/.test(to) || (current.kind === 'refuse' && current.code === 21211))
        return fail(res, 400, 21211, `Invalid 'To' Phone Number: ${to.slice(0, 3)}…`);
      if (stopped.has(to) || (current.kind === 'refuse' && current.code === 21610)) return fail(res, 400, 21610);
      if (current.kind === 'refuse') return fail(res, 400, current.code);
      const now = new Date();
      const message: PeerMessage = {
        sid: sid('SM'),
        to,
        from,
        messagingServiceSid,
        body,
        statusCallback,
        correlation,
        status: 'queued',
        createdAt: now,
      };
      stored.push(message);
      const final = current.kind === 'undelivered' ? { status: 'undelivered', errorCode: current.errorCode ?? 30003 } : { status: 'delivered' };
      schedule(message, [{ status: 'sent' }, final]);
      if (current.kind === 'timeout') {
        // Received and created; the answer never comes (the client times out or the connection dies).
        hanging.add(res);
        return;
      }
      const segments = Math.max(1, Math.ceil(body.length / 153));
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          account_sid: accountSid,
          api_version: '2010-04-01',
          body,
          date_created: rfc2822(now),
          date_sent: null,
          date_updated: rfc2822(now),
          direction: 'outbound-api',
          error_code: null,
          error_message: null,
          from,
          messaging_service_sid: messagingServiceSid,
          num_media: '0',
          num_segments: String(segments),
          price: null,
          price_unit: 'USD',
          sid: message.sid,
          status: 'queued',
          subresource_uris: { media: `/2010-04-01/Accounts/${accountSid}/Messages/${message.sid}/Media.json` },
          to,
          uri: `/2010-04-01/Accounts/${accountSid}/Messages/${message.sid}.json`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.address() as AddressInfo).port;

  const waitFor = async (predicate: () => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('twilio peer: condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    baseUrl: `http://127.0.0.1:${listening}`,
    accountSid,
    authToken,
    setFault: (next) => {
      fault = next;
    },
    setCallbacks: (mode) => {
      callbackMode = mode;
    },
    unsubscribe: (phone) => stopped.add(phone),
    messages: () => [...stored],
    countByCorrelation: (correlation) => stored.filter((message) => message.correlation === correlation).length,
    requests: () => received,
    callbacks: () => [...delivered],
    settle: async () => {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    sendInbound: async (url, { from, to, body }) => {
      const messageSid = sid('SM');
      const keyword = body.trim().toUpperCase();
      const optOut = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'].includes(keyword)
        ? 'STOP'
        : ['START', 'UNSTOP'].includes(keyword)
          ? 'START'
          : null;
      if (optOut === 'STOP') stopped.add(from);
      if (optOut === 'START') stopped.delete(from);
      return postSigned(authToken, url, {
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
        Body: body,
        From: from,
        MessageSid: messageSid,
        NumMedia: '0',
        NumSegments: '1',
        SmsMessageSid: messageSid,
        SmsSid: messageSid,
        SmsStatus: 'received',
        To: to,
        ...(optOut ? { OptOutType: optOut } : {}),
      });
    },
    waitFor,
    stop: async () => {
      for (const res of hanging) res.destroy();
      await Promise.all([...pending]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
