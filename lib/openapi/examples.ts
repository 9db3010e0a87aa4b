/**
 * The examples of the OpenAPI document (lib/openapi/document.ts), per operation (`METHOD path`):
 * a request body, and answers by status (2xx: the success bodies; 4xx: refusals beyond the
 * audience's common ones). lib/openapi/document.test.ts validates each against its own schema and
 * fails for an operation with no answer example, so a new route in lib/api/routes.ts gets one here.
 */

export type OperationExamples = { summary: string; request?: unknown; responses: Record<number, unknown> };

const id = '2b1e6c1a-8d4f-4c1e-9a57-3f0c2d9e7b11';
const jobId2 = '7d0f3f52-2c55-4b8a-a1de-6c2b1d7f9e40';
const eventId = '5a8c1f0e-6b2d-4e7a-9c3b-1d2e3f4a5b6c';
const noticeKey = '9f2c4a1b7e3d5c6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f';
const identity = { account_id: 'acct_42', reconciliation_id: 'recon_2026_03', exception_id: 'exc-1001' };

const reminder = {
  type: 'payment_recovery',
  identity,
  recipient: { email: 'ada@example.com', timeZone: 'Europe/Berlin' },
  dueAt: '2026-03-01T09:00:00Z',
  deadlineAt: '2026-03-03T09:00:00Z',
  payload: { customer_name: 'Ada Lovelace', amount: '49.00', currency: 'EUR', reference: 'RC-2026-0042' },
  evidenceRef: 'recon:exc-1001',
  source: 'billing-reconciliation',
};
const job = {
  id,
  noticeKey,
  type: 'payment_recovery',
  revision: 0,
  state: 'pending',
  dueAt: '2026-03-01T09:00:00.000Z',
  deadlineAt: '2026-03-03T09:00:00.000Z',
  source: 'billing-reconciliation',
};
const notice = {
  id,
  noticeKey,
  type: 'payment_recovery',
  identity,
  revision: 0,
  subjectId: 'acct_42',
  customerId: null,
  recipient: { channel: 'email', email: 'ada@example.com', phone: null },
  state: 'sent',
  ledgerState: 'sent',
  outcome: 'sent',
  suppressionReason: null,
  resolution: null,
  sentAt: '2026-03-01T09:00:04.120Z',
  window: {
    earliest: '2026-03-01T09:00:00.000Z',
    latest: '2026-03-03T09:00:00.000Z',
    category: 'required',
    region: null,
    ruleIds: [],
    ruleSetVersion: null,
    missed: null,
  },
  attempts: [{ at: '2026-03-01T09:00:03.900Z', outcome: 'sent', errorClass: null }],
  providerMessageIds: ['0100018e-5d1c-4e1b-9f3a-2c7d8e9f0a1b-000000'],
  deliveryEvents: [{ provider: 'ses', type: 'delivered', bounceType: null, occurredAt: '2026-03-01T09:00:06.000Z' }],
  cancellationRequests: [],
  preferenceChanges: [],
  event: null,
};
const evidence = { ref: 'recon:exc-1001', kind: 'reconciliation_exception', state: 'open', openedAt: '2026-03-01T08:00:00.000Z', resolvedAt: null };
const preferences = {
  recipient: 'ada@example.com',
  preferences: [
    { category: 'required', channel: 'email', state: 'required', source: null, changedAt: null },
    { category: 'courtesy', channel: 'email', state: 'opted_out', source: 'producer_api', changedAt: '2026-03-01T10:00:00.000Z' },
  ],
  suppression: null,
};
const summary = { received: 1, stored: 1, duplicates: 0, confirmed: 0, skippedCount: 0, skipped: [] };
const page = '<!doctype html><html lang="en"><body><h1>Your renewal reminder</h1></body></html>';

const endpointId = '3c9d2e1f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const webhookEndpoint = {
  id: endpointId,
  url: 'https://billing.example.com/hooks/notice-ledger',
  description: 'billing service',
  eventTypes: ['notice.sent', 'notice.bounced', 'notice.window_missed', 'cancellation.requested'],
  enabled: true,
  keys: [{ keyId: 'key_4f1c2d3e4a5b6c7d', createdAt: '2026-03-01T08:00:00.000Z', expiresAt: null }],
  createdBy: 'token:1a2b3c4d',
  createdAt: '2026-03-01T08:00:00.000Z',
  failingSince: null,
  disabledAt: null,
  disabledReason: null,
};
const whsec = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const urlRefused = {
  error: 'url_refused',
  details: [{ path: 'url', message: '10.0.0.7 is a private, loopback or link-local address (WEBHOOK_ALLOWED_PRIVATE)' }],
};

export const operationExamples: Record<string, OperationExamples> = {
  'POST /api/v1/reminders': {
    summary: 'Schedule a reminder (idempotent by notice type, identity and revision)',
    request: reminder,
    responses: {
      201: { ...job, created: true },
      200: { ...job, created: false },
      409: {
        error: 'notice_conflict',
        details: { message: 'this notice was scheduled with different fields', jobId: id, noticeKey, state: 'pending', fields: ['recipient.email'] },
      },
      422: { error: 'unknown_notice_type', details: 'payment_recoveryy is not a configured notice type' },
    },
  },
  'POST /api/v1/reminders/{id}/cancel': {
    summary: 'Cancel a pending reminder by job id',
    request: { reason: 'customer paid by wire' },
    responses: {
      200: { ...job, state: 'cancelled' },
      409: { error: 'not_pending', details: { message: 'the notice is claimed: it may already be on its way', state: 'claimed' } },
    },
  },
  'PUT /api/v1/evidence/{ref}': {
    summary: 'Open (or see) a piece of reconciliation evidence',
    request: { kind: 'reconciliation_exception', summary: 'card declined', details: {} },
    responses: {
      201: { ...evidence, created: true },
      200: { ...evidence, created: false },
      409: { error: 'evidence_conflict', details: { message: 'evidence recon:exc-1001 is already open with kind chargeback', state: 'open' } },
    },
  },
  'POST /api/v1/evidence/{ref}/resolve': {
    summary: 'Resolve evidence: the notices citing it are suppressed',
    request: { reason: 'paid by wire' },
    responses: {
      200: { ...evidence, state: 'resolved', resolvedAt: '2026-03-01T12:00:00.000Z', alreadyResolved: false, suppressedJobIds: [id] },
    },
  },
  'POST /api/v1/events': {
    summary: 'Post a business event; the notices it calls for are planned from it',
    request: {
      type: 'subscription_renewal',
      identity: { subscription_id: 'sub_123', period_start: '2026-12-04' },
      anchorAt: '2026-12-04T00:00:00Z',
      recipient: { email: 'ada@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
      contract: { termMonths: 12 },
      payload: { plan: 'Pro', amount: '120.00', currency: 'USD' },
    },
    responses: {
      201: {
        eventId,
        type: 'subscription_renewal',
        revision: 0,
        ruleSetVersion: '2026-11-01',
        created: true,
        planned: [
          {
            noticeType: 'renewal_notice_t72',
            category: 'required',
            noticeKey,
            jobId: jobId2,
            dueAt: '2026-11-01T17:00:00.000Z',
            window: { earliest: '2026-10-20T07:00:00.000Z', latest: '2026-11-04T07:59:59.000Z' },
            ruleIds: ['us-ca-ab2863-annual'],
          },
        ],
        unplanned: [],
      },
      422: { error: 'invalid_identity', details: [{ path: 'identity.subscription_id', message: 'is required by subscription_renewal' }] },
    },
  },
  'POST /api/v1/reminders/batch': {
    summary: 'Schedule up to 1 000 reminders in one call; each item answered as its single POST would be',
    request: { items: [reminder, reminder, { ...reminder, type: 'payment_reminder' }] },
    responses: {
      200: {
        results: [
          { index: 0, status: 201, body: { ...job, created: true } },
          { index: 1, status: 200, body: { ...job, created: false } },
          { index: 2, status: 422, body: { error: 'unknown_notice_type', details: 'payment_reminder is not a configured notice type' } },
        ],
      },
      413: { error: 'batch_too_large', details: { message: 'a batch holds at most 1000 items', limit: 1000, items: 1001 } },
    },
  },
  'POST /api/v1/events/batch': {
    summary: 'Post up to 1 000 business events in one call; each item answered as its single POST would be',
    request: {
      items: [
        {
          type: 'subscription_renewal',
          identity: { subscription_id: 'sub_123', period_start: '2026-12-04' },
          anchorAt: '2026-12-04T00:00:00Z',
          recipient: { email: 'ada@example.com', region: 'US-CA', timeZone: 'America/Los_Angeles', locale: 'en-US' },
          contract: { termMonths: 12 },
          payload: { plan: 'Pro', amount: '120.00', currency: 'USD' },
        },
      ],
    },
    responses: {
      200: {
        results: [
          {
            index: 0,
            status: 201,
            body: { eventId, type: 'subscription_renewal', revision: 0, ruleSetVersion: '2026-11-01', created: true, planned: [], unplanned: [] },
          },
        ],
      },
      413: { error: 'batch_too_large', details: { message: 'a batch holds at most 1000 items', limit: 1000, items: 1001 } },
    },
  },
  'GET /api/v1/notices/{id}/evidence': {
    summary: "A notice's evidence pack: its record, the message as sent, chain entries with inclusion paths, signed heads",
    responses: {
      200: {
        format: 'notice-ledger/evidence-pack',
        version: 1,
        exportedAt: '2026-03-02T10:00:00.000Z',
        noticeKey,
        keysUrl: 'https://ledger.example.com/.well-known/notice-ledger/keys.json',
        record: { noticeType: 'payment_recovery', category: 'required', channel: 'email' },
        message: { subject: 'Your payment did not go through', text: 'Hello Ada, …' },
        stripe: {
          cancellation_policy_disclosure: 'The notice showed the cancel link …',
          cancellation_rebuttal: 'A reminder was sent on 2026-03-01 …',
          customer_communication: 'See the attached rendering.',
        },
        entries: [
          {
            seq: 1,
            prevHash: '0'.repeat(64),
            entryHash: 'a'.repeat(64),
            noticeKey,
            kind: 'notice.sent',
            recordedAt: '2026-03-01T09:00:04.300Z',
            body: '{"kind":"notice.sent"}',
            proof: { headToSeq: 1, index: 0, size: 1, path: [] },
          },
        ],
        signedHeads: [{ toSeq: 1, kid: '1', payload: '{"toSeq":1}', signature: 'c2lnbmF0dXJl', timestampToken: null }],
        unsignedEntries: 0,
      },
    },
  },
  'GET /.well-known/notice-ledger/keys.json': {
    summary: 'The public keys evidence heads are signed with (a JWKS; retired keys stay listed)',
    responses: { 200: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: '1', use: 'sig', alg: 'EdDSA' }] } },
  },
  'GET /api/v1/cancellation-requests': {
    summary: "Poll the customers' cancellation requests, oldest first",
    responses: {
      200: {
        requests: [
          {
            id: '17',
            noticeKey,
            jobId: id,
            type: 'renewal_notice_t72',
            identity: { subscription_id: 'sub_123', period_start: '2026-12-04' },
            subjectId: 'sub_123',
            customerId: 'cus_42',
            source: 'recipient_page',
            codeVerified: false,
            requestedAt: '2026-12-02T10:14:03.512Z',
          },
        ],
        nextCursor: 'c1.17',
      },
    },
  },
  'GET /api/v1/notices/{id}': { summary: 'What happened to a notice (by job id or notice key)', responses: { 200: notice } },
  'GET /api/v1/notices': {
    summary: 'Notices by type and identity (identity.<field>=…), recipient, state or since',
    responses: { 200: { notices: [notice], nextCursor: null } },
  },
  'POST /api/v1/notices/cancel': {
    summary: 'Cancel by business identity',
    request: { type: 'payment_recovery', identity, reason: 'customer paid by wire' },
    responses: {
      200: { ...job, state: 'cancelled' },
      409: { error: 'not_pending', details: { message: 'the notice is cancelled already', state: 'cancelled' } },
      422: { error: 'invalid_identity', details: [{ path: 'identity.exception_id', message: 'is required by payment_recovery' }] },
    },
  },
  'PUT /api/v1/recipients/{email}/preferences': {
    summary: "Set a recipient's courtesy preferences",
    request: { preferences: [{ category: 'courtesy', channel: 'email', state: 'opted_out' }], reason: 'asked our support' },
    responses: { 200: { ...preferences, changed: 1 } },
  },
  'GET /api/v1/recipients/{email}/preferences': { summary: "A recipient's preferences and suppression", responses: { 200: preferences } },
  'POST /api/webhooks/generic': {
    summary: 'Delivery events in our own shape (HMAC-signed)',
    request: { events: [{ id: 'evt_1', type: 'delivered', messageId: '<2b1e@notices.example.com>', occurredAt: '2026-03-01T09:00:06Z' }] },
    responses: { 200: summary },
  },
  'POST /api/webhooks/postmark': {
    summary: 'Postmark webhooks (Basic auth)',
    request: { RecordType: 'Delivery', MessageID: '883953f4-6105-42a2-a16a-77a8eac79483', Recipient: 'ada@example.com', DeliveredAt: '2026-03-01T09:00:06Z' },
    responses: { 200: summary },
  },
  'POST /api/webhooks/sendgrid': {
    summary: 'SendGrid event webhook (signed ECDSA)',
    request: [{ email: 'ada@example.com', event: 'delivered', sg_event_id: 'sg_1', sg_message_id: 'abc.1', timestamp: 1772355606 }],
    responses: { 200: summary },
  },
  'POST /api/webhooks/ses': {
    summary: 'Amazon SES event publishing through SNS (signed)',
    request: {
      Type: 'Notification',
      MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
      TopicArn: 'arn:aws:sns:eu-west-1:123456789012:ses-events',
      Message: '{"eventType":"Delivery"}',
      Timestamp: '2026-03-01T09:00:06.000Z',
      SignatureVersion: '2',
      Signature: 'EXAMPLE',
      SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-example.pem',
    },
    responses: { 200: summary },
  },
  'POST /api/webhooks/twilio': {
    summary: 'Twilio status callbacks (X-Twilio-Signature)',
    request: { MessageSid: 'SM0123456789abcdef0123456789abcdef', MessageStatus: 'delivered' },
    responses: { 200: summary },
  },
  'POST /api/webhooks/twilio/inbound': {
    summary: 'Twilio incoming messages: STOP, START, HELP (X-Twilio-Signature)',
    request: { MessageSid: 'SM0123456789abcdef0123456789abcdef', From: '+14155550100', Body: 'STOP', OptOutType: 'STOP' },
    responses: { 200: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>' },
  },
  'GET /r/{token}': { summary: "The recipient's page for a notice (HTML)", responses: { 200: page } },
  'POST /r/{token}/cancel': {
    summary: 'The customer asks to cancel (Accept: application/json for JSON, else a 303 back to the page)',
    request: { code: '482913' },
    responses: { 200: { status: 'requested', requestedAt: '2026-12-02T10:14:03.512Z' } },
  },
  'POST /r/{token}/preferences': {
    summary: 'The customer turns courtesy reminders off or on',
    request: { channel: 'email', state: 'opted_out' },
    responses: { 200: { channel: 'email', state: 'opted_out', changed: true } },
  },
  'GET /api/recipient/unsubscribe/{token}': { summary: 'RFC 8058: a page with the unsubscribe button (never unsubscribes)', responses: { 200: page } },
  'POST /api/recipient/unsubscribe/{token}': { summary: 'RFC 8058 one-click unsubscribe', responses: { 200: page } },
  'GET /api/metrics': { summary: 'Prometheus metrics (text exposition format)', responses: { 200: '# HELP notice_ledger_up 1 when up\nnotice_ledger_up 1\n' } },
  'GET /api/health': { summary: 'Liveness', responses: { 200: { status: 'ok' } } },
  'GET /api/ready': { summary: 'Readiness: the database answers and every migration is applied', responses: { 200: { status: 'ready' } } },
  'GET /api/v1/openapi.json': {
    summary: 'This document',
    responses: { 200: { openapi: '3.1.1', info: { title: 'notice-ledger', version: '1' }, paths: {} } },
  },
  'GET /api/v1/webhook-endpoints': { summary: 'The webhook endpoints (never a secret)', responses: { 200: { endpoints: [webhookEndpoint] } } },
  'POST /api/v1/webhook-endpoints': {
    summary: 'Create a webhook endpoint; the whsec_ secret is in this answer only',
    request: { url: webhookEndpoint.url, description: 'billing service', eventTypes: webhookEndpoint.eventTypes, reason: 'billing listens for bounces' },
    responses: { 201: { endpoint: webhookEndpoint, secret: whsec }, 422: urlRefused },
  },
  'GET /api/v1/webhook-endpoints/{id}': { summary: 'One webhook endpoint (never a secret)', responses: { 200: webhookEndpoint } },
  'PATCH /api/v1/webhook-endpoints/{id}': {
    summary: 'Change its URL, event types or description, or disable / enable it',
    request: { enabled: false, reason: 'billing is migrating its receiver' },
    responses: { 200: { ...webhookEndpoint, enabled: false, disabledAt: '2026-03-02T10:00:00.000Z', disabledReason: 'manual' }, 422: urlRefused },
  },
  'POST /api/v1/webhook-endpoints/{id}/rotate-secret': {
    summary: 'A new signing secret (in this answer only); the previous one keeps signing during the overlap',
    request: { reason: 'yearly rotation' },
    responses: {
      200: {
        endpoint: {
          ...webhookEndpoint,
          keys: [
            { keyId: 'key_9e8d7c6b5a4f3e2d', createdAt: '2026-03-02T10:00:00.000Z', expiresAt: null },
            { keyId: 'key_4f1c2d3e4a5b6c7d', createdAt: '2026-03-01T08:00:00.000Z', expiresAt: '2026-03-03T10:00:00.000Z' },
          ],
        },
        secret: whsec,
        keyId: 'key_9e8d7c6b5a4f3e2d',
        previousKeysSignUntil: '2026-03-03T10:00:00.000Z',
      },
    },
  },
  'POST /api/v1/webhook-endpoints/{id}/test': {
    summary: 'Send a webhook.test event to this endpoint (through the outbox)',
    request: {},
    responses: {
      201: { webhookId: 'msg_2b1e6c1a8d4f4c1e9a573f0c2d9e7b11', type: 'webhook.test' },
      409: { error: 'endpoint_disabled', details: 'the endpoint is disabled; enable it first' },
    },
  },
};
