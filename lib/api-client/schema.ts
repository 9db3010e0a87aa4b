/* Generated from /api/v1/openapi.json by `npm run api:client` (openapi-typescript). Do not edit. */
/* eslint-disable @typescript-eslint/consistent-type-definitions -- openapi-typescript writes interfaces */
export interface paths {
  '/.well-known/notice-ledger/keys.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The public keys evidence heads are signed with (a JWKS; retired keys stay listed) */
    get: operations['getWellKnownNoticeLedgerKeys'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/health': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Liveness */
    get: operations['getHealth'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/metrics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Prometheus metrics (text exposition format) */
    get: operations['getMetrics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/ready': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Readiness: the database answers and every migration is applied */
    get: operations['getReady'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/recipient/unsubscribe/{token}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** RFC 8058: a page with the unsubscribe button (never unsubscribes) */
    get: operations['getRecipientUnsubscribeToken'];
    put?: never;
    /** RFC 8058 one-click unsubscribe */
    post: operations['postRecipientUnsubscribeToken'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/cancellation-requests': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Poll the customers' cancellation requests, oldest first */
    get: operations['getCancellationRequests'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Post a business event; the notices it calls for are planned from it */
    post: operations['postEvents'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/events/batch': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Post up to 1 000 business events in one call; each item answered as its single POST would be */
    post: operations['postEventsBatch'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/evidence/{ref}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** Open (or see) a piece of reconciliation evidence */
    put: operations['putEvidenceRef'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/evidence/{ref}/resolve': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resolve evidence: the notices citing it are suppressed */
    post: operations['postEvidenceRefResolve'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/notices': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Notices by type and identity (identity.<field>=…), recipient, state or since */
    get: operations['getNotices'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/notices/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** What happened to a notice (by job id or notice key) */
    get: operations['getNoticesId'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/notices/{id}/evidence': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A notice's evidence pack: its record, the message as sent, chain entries with inclusion paths, signed heads */
    get: operations['getNoticesIdEvidence'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/notices/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel by business identity */
    post: operations['postNoticesCancel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This document */
    get: operations['getOpenapi'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/recipients/{email}/preferences': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** A recipient's preferences and suppression */
    get: operations['getRecipientsEmailPreferences'];
    /** Set a recipient's courtesy preferences */
    put: operations['putRecipientsEmailPreferences'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/reminders': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Schedule a reminder (idempotent by notice type, identity and revision) */
    post: operations['postReminders'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/reminders/{id}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel a pending reminder by job id */
    post: operations['postRemindersIdCancel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/reminders/batch': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Schedule up to 1 000 reminders in one call; each item answered as its single POST would be */
    post: operations['postRemindersBatch'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhook-endpoints': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The webhook endpoints (never a secret) */
    get: operations['getWebhookEndpoints'];
    put?: never;
    /** Create a webhook endpoint; the whsec_ secret is in this answer only */
    post: operations['postWebhookEndpoints'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhook-endpoints/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One webhook endpoint (never a secret) */
    get: operations['getWebhookEndpointsId'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /** Change its URL, event types or description, or disable / enable it */
    patch: operations['patchWebhookEndpointsId'];
    trace?: never;
  };
  '/api/v1/webhook-endpoints/{id}/rotate-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** A new signing secret (in this answer only); the previous one keeps signing during the overlap */
    post: operations['postWebhookEndpointsIdRotateSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhook-endpoints/{id}/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Send a webhook.test event to this endpoint (through the outbox) */
    post: operations['postWebhookEndpointsIdTest'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/generic': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Delivery events in our own shape (HMAC-signed) */
    post: operations['postWebhooksGeneric'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/postmark': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Postmark webhooks (Basic auth) */
    post: operations['postWebhooksPostmark'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/sendgrid': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** SendGrid event webhook (signed ECDSA) */
    post: operations['postWebhooksSendgrid'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/ses': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Amazon SES event publishing through SNS (signed) */
    post: operations['postWebhooksSes'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/twilio': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Twilio status callbacks (X-Twilio-Signature) */
    post: operations['postWebhooksTwilio'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/webhooks/twilio/inbound': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Twilio incoming messages: STOP, START, HELP (X-Twilio-Signature) */
    post: operations['postWebhooksTwilioInbound'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/r/{token}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The recipient's page for a notice (HTML) */
    get: operations['getRToken'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/r/{token}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** The customer asks to cancel (Accept: application/json for JSON, else a 303 back to the page) */
    post: operations['postRTokenCancel'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/r/{token}/preferences': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** The customer turns courtesy reminders off or on */
    post: operations['postRTokenPreferences'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: never;
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  getWellKnownNoticeLedgerKeys: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            keys: {
              /** @constant */
              kty: 'OKP';
              /** @constant */
              crv: 'Ed25519';
              x: string;
              kid: string;
              /** @constant */
              use: 'sig';
              /** @constant */
              alg: 'EdDSA';
            }[];
          };
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  getHealth: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            status: 'ok';
          };
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  getMetrics: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/plain': string;
        };
      };
    };
  };
  getReady: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            status: 'ready';
          };
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  getRecipientUnsubscribeToken: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        token: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Gone */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Unsupported media type */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Too many requests */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
    };
  };
  postRecipientUnsubscribeToken: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        token: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/x-www-form-urlencoded': {
          /** @constant */
          'List-Unsubscribe': 'One-Click';
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Gone */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Unsupported media type */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Too many requests */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
    };
  };
  getCancellationRequests: {
    parameters: {
      query?: {
        since?: string;
        cursor?: string;
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            requests: {
              id: string;
              noticeKey: string;
              /** Format: uuid */
              jobId: string;
              type: string;
              identity: {
                [key: string]: string;
              };
              subjectId: string;
              customerId: string | null;
              /** @enum {string} */
              source: 'recipient_page';
              codeVerified: boolean;
              /** Format: date-time */
              requestedAt: string;
            }[];
            nextCursor: string | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postEvents: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          type: string;
          identity: {
            [key: string]: unknown;
          };
          /** @default 0 */
          revision?: number;
          /** Format: date-time */
          anchorAt: string;
          recipient: {
            /** Format: email */
            email?: string;
            phone?: string;
            region: string;
            timeZone: string;
            locale: string;
          };
          /** @default {} */
          contract?: {
            termMonths?: number;
            billingIntervalMonths?: number;
            trialDays?: number;
            promoDays?: number;
            priceChange?: {
              /** Format: date-time */
              effectiveAt?: string;
            };
            /** @enum {string} */
            paymentNetwork?: 'visa' | 'mastercard' | 'amex' | 'rupay' | 'upi' | 'other';
            /** Format: date-time */
            cancellationDeadlineAt?: string;
            /** Format: date-time */
            trialEndsAt?: string;
          };
          customerId?: string;
          /** @default {} */
          payload?: {
            [key: string]: unknown;
          };
          evidenceRef?: string;
          /** @default events-api */
          source?: string;
        };
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            eventId: string;
            type: string;
            revision: number;
            ruleSetVersion: string;
            created: boolean;
            planned: {
              noticeType: string;
              /** @enum {string} */
              category: 'required' | 'courtesy';
              noticeKey: string;
              /** Format: uuid */
              jobId: string;
              /** Format: date-time */
              dueAt: string;
              window: {
                /** Format: date-time */
                earliest: string;
                /** Format: date-time */
                latest: string;
              };
              ruleIds: string[];
            }[];
            unplanned: {
              noticeType: string;
              /** @enum {string} */
              category: 'required' | 'courtesy';
              reason: string;
              ruleIds: string[];
            }[];
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unprocessable */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postEventsBatch: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          items: unknown[];
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: {
              index: number;
              status: number;
              body:
                | {
                    /** Format: uuid */
                    eventId: string;
                    type: string;
                    revision: number;
                    ruleSetVersion: string;
                    created: boolean;
                    planned: {
                      noticeType: string;
                      /** @enum {string} */
                      category: 'required' | 'courtesy';
                      noticeKey: string;
                      /** Format: uuid */
                      jobId: string;
                      /** Format: date-time */
                      dueAt: string;
                      window: {
                        /** Format: date-time */
                        earliest: string;
                        /** Format: date-time */
                        latest: string;
                      };
                      ruleIds: string[];
                    }[];
                    unplanned: {
                      noticeType: string;
                      /** @enum {string} */
                      category: 'required' | 'courtesy';
                      reason: string;
                      ruleIds: string[];
                    }[];
                  }
                | {
                    error: string;
                    details: unknown;
                  };
            }[];
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  putEvidenceRef: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        ref: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          kind: string;
          summary?: string;
          /** @default {} */
          details?: {
            [key: string]: unknown;
          };
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            ref: string;
            kind: string;
            state: string;
            /** Format: date-time */
            openedAt: string;
            resolvedAt: string | null;
            created: boolean;
          };
        };
      };
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            ref: string;
            kind: string;
            state: string;
            /** Format: date-time */
            openedAt: string;
            resolvedAt: string | null;
            created: boolean;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Conflict */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postEvidenceRefResolve: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          kind?: string;
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            ref: string;
            kind: string;
            state: string;
            /** Format: date-time */
            openedAt: string;
            resolvedAt: string | null;
            alreadyResolved: boolean;
            suppressedJobIds: string[];
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getNotices: {
    parameters: {
      query?: {
        type?: string;
        revision?: number;
        recipient?: string;
        state?: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
        since?: string;
        cursor?: string;
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            notices: {
              /** Format: uuid */
              id: string;
              noticeKey: string;
              type: string;
              identity: {
                [key: string]: string;
              };
              revision: number;
              subjectId: string;
              customerId: string | null;
              recipient: {
                /** @enum {string} */
                channel: 'email' | 'sms';
                email: string | null;
                phone: string | null;
              };
              /** @enum {string} */
              state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
              ledgerState: ('claimed' | 'sent' | 'released' | 'suppressed') | null;
              /** @enum {string} */
              outcome: 'pending' | 'accepted' | 'sent' | 'dropped' | 'outcome_unknown' | 'window_missed' | 'suppressed' | 'failed' | 'cancelled';
              suppressionReason: string | null;
              resolution: {
                text: string;
                at: string | null;
              } | null;
              sentAt: string | null;
              window: {
                /** Format: date-time */
                earliest: string;
                /** Format: date-time */
                latest: string;
                /** @enum {string} */
                category: 'required' | 'courtesy';
                region: string | null;
                ruleIds: string[];
                ruleSetVersion: string | null;
                missed: {
                  /** Format: date-time */
                  at: string;
                  rule: string;
                } | null;
              };
              attempts: {
                /** Format: date-time */
                at: string;
                outcome: string;
                errorClass: string | null;
              }[];
              providerMessageIds: string[];
              deliveryEvents: {
                provider: string;
                type: string;
                bounceType: string | null;
                /** Format: date-time */
                occurredAt: string;
              }[];
              cancellationRequests: {
                source: string;
                codeVerified: boolean;
                /** Format: date-time */
                requestedAt: string;
              }[];
              preferenceChanges: {
                category: string;
                from: string | null;
                to: string;
                source: string;
                /** Format: date-time */
                at: string;
              }[];
              event: {
                /** Format: uuid */
                id: string;
                type: string;
                revision: number;
                /** Format: date-time */
                anchorAt: string;
              } | null;
            }[];
            nextCursor: string | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getNoticesId: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            noticeKey: string;
            type: string;
            identity: {
              [key: string]: string;
            };
            revision: number;
            subjectId: string;
            customerId: string | null;
            recipient: {
              /** @enum {string} */
              channel: 'email' | 'sms';
              email: string | null;
              phone: string | null;
            };
            /** @enum {string} */
            state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
            ledgerState: ('claimed' | 'sent' | 'released' | 'suppressed') | null;
            /** @enum {string} */
            outcome: 'pending' | 'accepted' | 'sent' | 'dropped' | 'outcome_unknown' | 'window_missed' | 'suppressed' | 'failed' | 'cancelled';
            suppressionReason: string | null;
            resolution: {
              text: string;
              at: string | null;
            } | null;
            sentAt: string | null;
            window: {
              /** Format: date-time */
              earliest: string;
              /** Format: date-time */
              latest: string;
              /** @enum {string} */
              category: 'required' | 'courtesy';
              region: string | null;
              ruleIds: string[];
              ruleSetVersion: string | null;
              missed: {
                /** Format: date-time */
                at: string;
                rule: string;
              } | null;
            };
            attempts: {
              /** Format: date-time */
              at: string;
              outcome: string;
              errorClass: string | null;
            }[];
            providerMessageIds: string[];
            deliveryEvents: {
              provider: string;
              type: string;
              bounceType: string | null;
              /** Format: date-time */
              occurredAt: string;
            }[];
            cancellationRequests: {
              source: string;
              codeVerified: boolean;
              /** Format: date-time */
              requestedAt: string;
            }[];
            preferenceChanges: {
              category: string;
              from: string | null;
              to: string;
              source: string;
              /** Format: date-time */
              at: string;
            }[];
            event: {
              /** Format: uuid */
              id: string;
              type: string;
              revision: number;
              /** Format: date-time */
              anchorAt: string;
            } | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getNoticesIdEvidence: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            format: 'notice-ledger/evidence-pack';
            /** @constant */
            version: 1;
            exportedAt: string;
            noticeKey: string;
            keysUrl: string;
            record: {
              [key: string]: unknown;
            };
            message: {
              [key: string]: unknown;
            } | null;
            stripe: {
              cancellation_policy_disclosure: string;
              cancellation_rebuttal: string;
              customer_communication: string;
            };
            entries: {
              seq: number;
              prevHash: string;
              entryHash: string;
              noticeKey: string;
              kind: string;
              recordedAt: string;
              body: string;
              proof: {
                headToSeq: number;
                index: number;
                size: number;
                path: string[];
              };
            }[];
            pieces?: {
              [key: string]: string[];
            };
            signedHeads: {
              toSeq: number;
              kid: string;
              payload: string;
              signature: string;
              timestampToken: string | null;
            }[];
            unsignedEntries: number;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postNoticesCancel: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          type: string;
          identity: {
            [key: string]: unknown;
          };
          revision?: number;
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            noticeKey: string;
            type: string;
            revision: number;
            /** @enum {string} */
            state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
            /** Format: date-time */
            dueAt: string;
            /** Format: date-time */
            deadlineAt: string;
            source: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Conflict */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unprocessable */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getOpenapi: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            openapi: '3.1.1';
            info: {
              title: string;
              version: string;
            } & {
              [key: string]: unknown;
            };
            paths: {
              [key: string]: unknown;
            };
          } & {
            [key: string]: unknown;
          };
        };
      };
      /** @description Unavailable */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  getRecipientsEmailPreferences: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        email: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            recipient: string;
            preferences: {
              /** @enum {string} */
              category: 'required' | 'courtesy';
              /** @enum {string} */
              channel: 'email' | 'sms';
              /** @enum {string} */
              state: 'opted_in' | 'opted_out' | 'required';
              source: string | null;
              changedAt: string | null;
            }[];
            suppression: {
              /** @enum {string} */
              reason: 'hard_bounce' | 'complaint' | 'unsubscribed' | 'manual';
              /** Format: date-time */
              since: string;
            } | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  putRecipientsEmailPreferences: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        email: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          preferences: {
            /** @enum {string} */
            category: 'required' | 'courtesy';
            /** @enum {string} */
            channel: 'email' | 'sms';
            /** @enum {string} */
            state: 'opted_in' | 'opted_out';
          }[];
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            recipient: string;
            preferences: {
              /** @enum {string} */
              category: 'required' | 'courtesy';
              /** @enum {string} */
              channel: 'email' | 'sms';
              /** @enum {string} */
              state: 'opted_in' | 'opted_out' | 'required';
              source: string | null;
              changedAt: string | null;
            }[];
            suppression: {
              /** @enum {string} */
              reason: 'hard_bounce' | 'complaint' | 'unsubscribed' | 'manual';
              /** Format: date-time */
              since: string;
            } | null;
            changed: number;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postReminders: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          type: string;
          identity: {
            [key: string]: string;
          };
          /** @default 0 */
          revision?: number;
          recipient: {
            /** Format: email */
            email?: string;
            /** @default UTC */
            timeZone?: string;
            locale?: string;
            phone?: string;
          };
          /** Format: date-time */
          dueAt: string;
          /** Format: date-time */
          deadlineAt?: string;
          /** Format: date-time */
          anchorAt?: string;
          region?: string;
          contract?: {
            termMonths?: number;
            billingIntervalMonths?: number;
            trialDays?: number;
            promoDays?: number;
            priceChange?: {
              /** Format: date-time */
              effectiveAt?: string;
            };
            /** @enum {string} */
            paymentNetwork?: 'visa' | 'mastercard' | 'amex' | 'rupay' | 'upi' | 'other';
            /** Format: date-time */
            cancellationDeadlineAt?: string;
            /** Format: date-time */
            trialEndsAt?: string;
          };
          /** @default {} */
          payload?: {
            [key: string]: unknown;
          };
          evidenceRef?: string;
          customerId?: string;
          source: string;
          batchId?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            noticeKey: string;
            type: string;
            revision: number;
            /** @enum {string} */
            state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
            /** Format: date-time */
            dueAt: string;
            /** Format: date-time */
            deadlineAt: string;
            source: string;
            created: boolean;
            window?: {
              /** Format: date-time */
              earliest: string;
              /** Format: date-time */
              latest: string;
              ruleIds: string[];
              ruleSetVersion: string | null;
            };
          };
        };
      };
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            noticeKey: string;
            type: string;
            revision: number;
            /** @enum {string} */
            state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
            /** Format: date-time */
            dueAt: string;
            /** Format: date-time */
            deadlineAt: string;
            source: string;
            created: boolean;
            window?: {
              /** Format: date-time */
              earliest: string;
              /** Format: date-time */
              latest: string;
              ruleIds: string[];
              ruleSetVersion: string | null;
            };
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Conflict */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unprocessable */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postRemindersIdCancel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            noticeKey: string;
            type: string;
            revision: number;
            /** @enum {string} */
            state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
            /** Format: date-time */
            dueAt: string;
            /** Format: date-time */
            deadlineAt: string;
            source: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Conflict */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postRemindersBatch: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          items: unknown[];
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            results: {
              index: number;
              status: number;
              body:
                | {
                    /** Format: uuid */
                    id: string;
                    noticeKey: string;
                    type: string;
                    revision: number;
                    /** @enum {string} */
                    state: 'pending' | 'claimed' | 'sent' | 'suppressed' | 'failed' | 'cancelled';
                    /** Format: date-time */
                    dueAt: string;
                    /** Format: date-time */
                    deadlineAt: string;
                    source: string;
                    created: boolean;
                    window?: {
                      /** Format: date-time */
                      earliest: string;
                      /** Format: date-time */
                      latest: string;
                      ruleIds: string[];
                      ruleSetVersion: string | null;
                    };
                  }
                | {
                    error: string;
                    details: unknown;
                  };
            }[];
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getWebhookEndpoints: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            endpoints: {
              /** Format: uuid */
              id: string;
              url: string;
              description: string | null;
              eventTypes: string[];
              enabled: boolean;
              keys: {
                keyId: string;
                /** Format: date-time */
                createdAt: string;
                expiresAt: string | null;
              }[];
              createdBy: string;
              /** Format: date-time */
              createdAt: string;
              failingSince: string | null;
              disabledAt: string | null;
              disabledReason: string | null;
            }[];
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postWebhookEndpoints: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          url: string;
          description?: string | null;
          eventTypes?: (
            | 'notice.sent'
            | 'notice.delivered'
            | 'notice.bounced'
            | 'notice.complained'
            | 'notice.failed'
            | 'notice.suppressed'
            | 'notice.window_missed'
            | 'notice.outcome_unknown'
            | 'notice.resolved'
            | 'cancellation.requested'
            | 'preference.changed'
            | 'compliance_gap.opened'
          )[];
          reason?: string;
        };
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            endpoint: {
              /** Format: uuid */
              id: string;
              url: string;
              description: string | null;
              eventTypes: string[];
              enabled: boolean;
              keys: {
                keyId: string;
                /** Format: date-time */
                createdAt: string;
                expiresAt: string | null;
              }[];
              createdBy: string;
              /** Format: date-time */
              createdAt: string;
              failingSince: string | null;
              disabledAt: string | null;
              disabledReason: string | null;
            };
            secret: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unprocessable */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  getWebhookEndpointsId: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            url: string;
            description: string | null;
            eventTypes: string[];
            enabled: boolean;
            keys: {
              keyId: string;
              /** Format: date-time */
              createdAt: string;
              expiresAt: string | null;
            }[];
            createdBy: string;
            /** Format: date-time */
            createdAt: string;
            failingSince: string | null;
            disabledAt: string | null;
            disabledReason: string | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  patchWebhookEndpointsId: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          url?: string;
          description?: string | null;
          eventTypes?: (
            | 'notice.sent'
            | 'notice.delivered'
            | 'notice.bounced'
            | 'notice.complained'
            | 'notice.failed'
            | 'notice.suppressed'
            | 'notice.window_missed'
            | 'notice.outcome_unknown'
            | 'notice.resolved'
            | 'cancellation.requested'
            | 'preference.changed'
            | 'compliance_gap.opened'
          )[];
          enabled?: boolean;
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** Format: uuid */
            id: string;
            url: string;
            description: string | null;
            eventTypes: string[];
            enabled: boolean;
            keys: {
              keyId: string;
              /** Format: date-time */
              createdAt: string;
              expiresAt: string | null;
            }[];
            createdBy: string;
            /** Format: date-time */
            createdAt: string;
            failingSince: string | null;
            disabledAt: string | null;
            disabledReason: string | null;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unprocessable */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postWebhookEndpointsIdRotateSecret: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          reason?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            endpoint: {
              /** Format: uuid */
              id: string;
              url: string;
              description: string | null;
              eventTypes: string[];
              enabled: boolean;
              keys: {
                keyId: string;
                /** Format: date-time */
                createdAt: string;
                expiresAt: string | null;
              }[];
              createdBy: string;
              /** Format: date-time */
              createdAt: string;
              failingSince: string | null;
              disabledAt: string | null;
              disabledReason: string | null;
            };
            secret: string;
            keyId: string;
            /** Format: date-time */
            previousKeysSignUntil: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postWebhookEndpointsIdTest: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/json': {
          reason?: string;
        };
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            webhookId: string;
            /** @constant */
            type: 'webhook.test';
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Conflict */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @description A machine name: invalid_request, unauthorized, missing_scope, notice_conflict, not_pending, … */
            error: string;
            /** @description Field issues ({path, message}[]), the conflicting job, or a sentence. */
            details: unknown;
          };
        };
      };
    };
  };
  postWebhooksGeneric: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          events: {
            id: string;
            /** @enum {string} */
            type: 'accepted' | 'delivered' | 'deferred' | 'bounce' | 'soft_bounce' | 'complaint' | 'dropped' | 'other';
            correlation?: string | null;
            messageId?: string | null;
            providerMessageId?: string | null;
            recipient?: string | null;
            /** Format: date-time */
            occurredAt: string;
            bounceType?: ('hard' | 'soft') | null;
          }[];
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            received: number;
            stored: number;
            duplicates: number;
            confirmed: number;
            skippedCount: number;
            skipped: {
              index: number;
              eventId: string | null;
              /** @enum {string} */
              reason: 'not_an_object' | 'missing_event_id' | 'invalid_event_id' | 'invalid_field';
              detail: string;
            }[];
            note?: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  postWebhooksPostmark: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json':
          | ({
              /** @constant */
              RecordType: 'Delivery';
              MessageID: string;
              Recipient: string;
              /** Format: date-time */
              DeliveredAt: string;
              Metadata?: {
                [key: string]: unknown;
              };
            } & {
              [key: string]: unknown;
            })
          | ({
              /** @enum {string} */
              RecordType: 'Bounce' | 'SpamComplaint';
              ID: number | string;
              Type: string;
              TypeCode?: number;
              MessageID: string;
              Email: string;
              /** Format: date-time */
              BouncedAt: string;
              Metadata?: {
                [key: string]: unknown;
              };
            } & {
              [key: string]: unknown;
            })
          | ({
              /** @constant */
              RecordType: 'SubscriptionChange';
              MessageID?: string | null;
              Recipient: string;
              SuppressSending: boolean;
              SuppressionReason?: string | null;
              Origin?: string | null;
              /** Format: date-time */
              ChangedAt: string;
              Metadata?: {
                [key: string]: unknown;
              };
            } & {
              [key: string]: unknown;
            })
          | ({
              RecordType: string;
              MessageID: string;
              Metadata?: {
                [key: string]: unknown;
              };
            } & {
              [key: string]: unknown;
            });
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            received: number;
            stored: number;
            duplicates: number;
            confirmed: number;
            skippedCount: number;
            skipped: {
              index: number;
              eventId: string | null;
              /** @enum {string} */
              reason: 'not_an_object' | 'missing_event_id' | 'invalid_event_id' | 'invalid_field';
              detail: string;
            }[];
            note?: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  postWebhooksSendgrid: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': unknown[];
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            received: number;
            stored: number;
            duplicates: number;
            confirmed: number;
            skippedCount: number;
            skipped: {
              index: number;
              eventId: string | null;
              /** @enum {string} */
              reason: 'not_an_object' | 'missing_event_id' | 'invalid_event_id' | 'invalid_field';
              detail: string;
            }[];
            note?: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  postWebhooksSes: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': {
          /** @enum {string} */
          Type: 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
          MessageId: string;
          TopicArn: string;
          Subject?: string;
          Message: string;
          /** Format: date-time */
          Timestamp: string;
          /** @enum {string} */
          SignatureVersion: '1' | '2';
          Signature: string;
          SigningCertURL: string;
          SubscribeURL?: string;
          Token?: string;
          UnsubscribeURL?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            received: number;
            stored: number;
            duplicates: number;
            confirmed: number;
            skippedCount: number;
            skipped: {
              index: number;
              eventId: string | null;
              /** @enum {string} */
              reason: 'not_an_object' | 'missing_event_id' | 'invalid_event_id' | 'invalid_field';
              detail: string;
            }[];
            note?: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  postWebhooksTwilio: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/x-www-form-urlencoded': {
          MessageSid: string;
          MessageStatus: string;
          AccountSid?: string;
          ErrorCode?: string;
          MessagingServiceSid?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            received: number;
            stored: number;
            duplicates: number;
            confirmed: number;
            skippedCount: number;
            skipped: {
              index: number;
              eventId: string | null;
              /** @enum {string} */
              reason: 'not_an_object' | 'missing_event_id' | 'invalid_event_id' | 'invalid_field';
              detail: string;
            }[];
            note?: string;
          };
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  postWebhooksTwilioInbound: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/x-www-form-urlencoded': {
          MessageSid: string;
          From: string;
          To?: string;
          /** @default  */
          Body?: string;
          OptOutType?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/xml': string;
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Unauthenticated */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
      /** @description Internal error; safe to retry */
      500: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            error: string;
          };
        };
      };
    };
  };
  getRToken: {
    parameters: {
      query?: {
        flash?: 'cancel_requested' | 'cancel_already' | 'preferences_saved' | 'code_required' | 'code_wrong';
      };
      header?: never;
      path: {
        token: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
        };
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Gone */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Too many requests */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
    };
  };
  postRTokenCancel: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        token: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/x-www-form-urlencoded': {
          code?: string;
        };
        'application/json': {
          code?: string;
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            ok: true;
            data:
              | {
                  /** @enum {string} */
                  status: 'requested' | 'already_requested';
                  /** Format: date-time */
                  requestedAt: string;
                }
              | {
                  /** @constant */
                  status: 'redirect';
                  /** Format: uri */
                  location: string;
                };
          };
        };
      };
      /** @description See Other: back to the page */
      303: {
        headers: {
          location?: string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Gone */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Too many requests */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
    };
  };
  postRTokenPreferences: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        token: string;
      };
      cookie?: never;
    };
    requestBody?: {
      content: {
        'application/x-www-form-urlencoded': {
          /** @enum {string} */
          channel: 'email' | 'sms';
          /** @enum {string} */
          state: 'opted_in' | 'opted_out';
        };
        'application/json': {
          /** @enum {string} */
          channel: 'email' | 'sms';
          /** @enum {string} */
          state: 'opted_in' | 'opted_out';
        };
      };
    };
    responses: {
      /** @description OK */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            /** @constant */
            ok: true;
            data: {
              /** @enum {string} */
              channel: 'email' | 'sms';
              /** @enum {string} */
              state: 'opted_in' | 'opted_out';
              changed: boolean;
            };
          };
        };
      };
      /** @description See Other: back to the page */
      303: {
        headers: {
          location?: string;
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Malformed request */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Forbidden */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Not found */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Gone */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
      /** @description Too many requests */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/html': string;
          'application/json': {
            /** @constant */
            ok: false;
            error: {
              code: string;
              message: string;
            };
          };
        };
      };
    };
  };
}
