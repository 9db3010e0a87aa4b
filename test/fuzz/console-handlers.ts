import fc from 'fast-check';
import type { Permission } from '@/lib/auth/permissions';
import { consoleRouteContracts } from '@/lib/api/routes';
import { loadRouteHandler } from '@/testing/route-handlers';
import { hostileString, plausibleString } from './arbitraries';

/**
 * The one list of console route handlers the fuzz suite and the authorization matrix walk.
 * `permission` is what DESIGN.md ("Security") says the route needs — written here, not read
 * from the route, so a route guarded by the wrong permission fails the matrix.
 * A new console route (or server action) is added here and is fuzzed and matrix-checked at once.
 */

export type ConsoleHandler = {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  permission: Permission;
  /** Query parameter names the handler reads (GET). */
  queryNames?: readonly string[];
  /** A body the handler accepts (POST); the fuzzer mutates it. Ids are filled in by the test. */
  validBody?: (ids: ValidIds) => Record<string, unknown>;
  mutates: boolean;
  /** More hostile bodies in the handler's own format (e.g. an uploaded CSV), besides mutations of validBody. */
  extraBodies?: fc.Arbitrary<string>;
  /** Inputs that once broke the handler (always run, before the random ones). */
  regressions?: readonly (readonly [string, string])[][];
  regressionBodies?: readonly string[];
  /**
   * Tables a refused request may still write: a wrong current password is a failed sign-in,
   * counted towards the lockout (users) and audited (audit_log) like one.
   */
  refusalWrites?: readonly string[];
};

export type ValidIds = { victimUserId: string; victimNoticeKey: string; victimTokenId: string };

const listed: readonly ConsoleHandler[] = [
  {
    name: 'overview/pending',
    method: 'GET',
    path: '/api/console/overview/pending',
    permission: 'overview.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'overview/series',
    method: 'GET',
    path: '/api/console/overview/series',
    permission: 'overview.read',
    queryNames: ['range'],
    mutates: false,
  },
  {
    name: 'overview/charts',
    method: 'GET',
    path: '/api/console/overview/charts',
    permission: 'overview.read',
    queryNames: ['range'],
    mutates: false,
  },
  {
    name: 'overview/status',
    method: 'GET',
    path: '/api/console/overview/status',
    permission: 'overview.read',
    queryNames: ['range'],
    mutates: false,
  },
  {
    name: 'lookup',
    method: 'GET',
    path: '/api/console/lookup',
    permission: 'lookup.read',
    queryNames: ['q'],
    mutates: false,
    regressions: [[['q', 'a\u0000b']], [['q', 'a\u0000b@example.com']]],
  },
  {
    name: 'lookup evidence pack',
    method: 'GET',
    path: '/api/console/lookup/evidence',
    permission: 'lookup.read',
    queryNames: ['notice'],
    mutates: false,
  },
  {
    name: 'lookup received message (re-render)',
    method: 'GET',
    path: '/api/console/lookup/received',
    permission: 'lookup.read',
    queryNames: ['notice'],
    mutates: false,
    // A well-formed key or job id that names nothing is a 404, never a 500.
    regressions: [[['notice', 'f'.repeat(64)]], [['notice', '00000000-0000-4000-8000-000000000000']], [['notice', 'F'.repeat(64)]]],
  },
  {
    name: 'quarantine (list)',
    method: 'GET',
    path: '/api/console/quarantine',
    permission: 'quarantine.read',
    queryNames: ['olderThanMinutes', 'recipientDomain', 'noticeType', 'afterClaimedAt', 'afterKey'],
    mutates: false,
    regressions: [
      [
        ['afterClaimedAt', '2026-02-30 10:00:00+00'],
        ['afterKey', 'a'.repeat(64)],
      ],
      [
        ['afterClaimedAt', '2026-11-29 25:00:00+00'],
        ['afterKey', 'a'.repeat(64)],
      ],
    ],
  },
  {
    name: 'controls (list)',
    method: 'GET',
    path: '/api/console/controls',
    permission: 'overview.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'controls (pause)',
    method: 'POST',
    path: '/api/console/controls',
    permission: 'controls.manage',
    validBody: () => ({ action: 'pause', target: { scope: 'notice_type', noticeType: 'renewal_notice_t72' }, reason: 'fuzz: incident drill' }),
    mutates: true,
  },
  {
    name: 'rollout (view)',
    method: 'GET',
    path: '/api/console/rollout',
    permission: 'overview.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'rollout (mode)',
    method: 'POST',
    path: '/api/console/rollout',
    permission: 'rollout.manage',
    validBody: () => ({ action: 'shadow', reason: 'fuzz: rollout drill' }),
    mutates: true,
  },
  {
    name: 'rollout/decide',
    method: 'POST',
    path: '/api/console/rollout/decide',
    permission: 'rollout.approve',
    validBody: () => ({ decision: 'reject', reason: 'fuzz: rollout drill' }),
    mutates: true,
  },
  {
    name: 'rollout/backfill',
    method: 'POST',
    path: '/api/console/rollout/backfill',
    permission: 'rollout.manage',
    validBody: () => ({ dryRun: true, reason: 'fuzz: rollout drill' }),
    mutates: true,
  },
  {
    name: 'quarantine/count',
    method: 'POST',
    path: '/api/console/quarantine/count',
    permission: 'quarantine.resolve',
    validBody: () => ({ selection: { filter: { olderThanMinutes: 0, recipientDomain: 'example.com', noticeType: 'renewal_notice_t72' } } }),
    mutates: false,
  },
  {
    name: 'quarantine/resolve',
    method: 'POST',
    path: '/api/console/quarantine/resolve',
    permission: 'quarantine.resolve',
    validBody: ({ victimNoticeKey }) => ({ action: 'release', selection: { keys: [victimNoticeKey] }, reason: 'fuzz: provider confirmed nothing' }),
    mutates: true,
  },
  {
    name: 'failures (list)',
    method: 'GET',
    path: '/api/console/failures',
    permission: 'failures.read',
    queryNames: ['kind', 'noticeType', 'channel', 'errorClass', 'from', 'to', 'afterAt', 'afterId'],
    mutates: false,
    regressions: [
      [
        ['afterAt', '2026-02-30 10:00:00+00'],
        ['afterId', '00000000-0000-4000-8000-000000000000'],
      ],
      [
        ['from', '2026-12-02T00:00:00Z'],
        ['to', '2026-12-01T00:00:00Z'],
      ],
      [['errorClass', 'smtp_451\u0000']],
    ],
  },
  {
    name: 'failures/retry',
    method: 'POST',
    path: '/api/console/failures/retry',
    permission: 'failures.retry',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', reason: 'fuzz: relay is back' }),
    mutates: true,
  },
  {
    name: 'failures/bulk-retry',
    method: 'POST',
    path: '/api/console/failures/bulk-retry',
    permission: 'failures.retry',
    validBody: () => ({
      filter: { errorClass: 'smtp_451', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
      reason: 'fuzz: relay outage is over',
    }),
    mutates: true,
  },
  {
    name: 'windows/summary',
    method: 'GET',
    path: '/api/console/windows/summary',
    permission: 'windows.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'windows/at-risk',
    method: 'GET',
    path: '/api/console/windows/at-risk',
    permission: 'windows.read',
    queryNames: ['afterAt', 'afterId'],
    mutates: false,
    regressions: [
      [
        ['afterAt', '2026-02-30 10:00:00+00'],
        ['afterId', '00000000-0000-4000-8000-000000000000'],
      ],
    ],
  },
  {
    name: 'windows/missed',
    method: 'GET',
    path: '/api/console/windows/missed',
    permission: 'windows.read',
    queryNames: ['afterAt', 'afterId'],
    mutates: false,
  },
  {
    name: 'windows/gaps',
    method: 'GET',
    path: '/api/console/windows/gaps',
    permission: 'windows.read',
    queryNames: ['afterAt', 'afterId'],
    mutates: false,
    regressions: [
      [
        ['afterAt', '2026-11-29 25:00:00+00'],
        ['afterId', '1'],
      ],
    ],
  },
  {
    name: 'windows/gaps/resolve',
    method: 'POST',
    path: '/api/console/windows/gaps/resolve',
    permission: 'gaps.resolve',
    validBody: () => ({ id: 1, reason: 'fuzz: sent by post, counsel agreed' }),
    mutates: true,
  },
  {
    name: 'notice-config',
    method: 'GET',
    path: '/api/console/notice-config',
    permission: 'notice_config.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'templates/test',
    method: 'POST',
    path: '/api/console/templates/test',
    permission: 'templates.test',
    validBody: () => ({ template: 'renewal_notice_t72', locale: 'en', to: 'fuzz@example.test' }),
    mutates: true,
  },
  {
    name: 'audit',
    method: 'GET',
    path: '/api/console/audit',
    permission: 'audit.read',
    queryNames: ['actor', 'action', 'target', 'beforeAt', 'beforeId'],
    mutates: false,
    regressions: [
      [['actor', 'a\u0000b']],
      [
        ['beforeAt', '2026-99-99 10:00'],
        ['beforeId', '1'],
      ],
      [
        ['beforeAt', '2026-02-30 10:00:00+00'],
        ['beforeId', '1'],
      ],
    ],
  },
  {
    name: 'users (list)',
    method: 'GET',
    path: '/api/console/users',
    permission: 'users.manage',
    queryNames: ['after'],
    mutates: false,
    regressions: [[['after', 'a\u0000']]],
  },
  {
    name: 'users (create)',
    method: 'POST',
    path: '/api/console/users',
    permission: 'users.manage',
    validBody: () => ({ email: 'fuzz-new@example.com', name: 'Fuzz New', role: 'support', reason: 'fuzz: new starter' }),
    mutates: true,
    regressionBodies: [
      JSON.stringify({ email: 'fuzz-nul@example.com', name: 'a\u0000b', role: 'support', reason: 'because' }),
      JSON.stringify({ email: 'fuzz-nul@example.com', name: 'ab', role: 'support', reason: 'bec\u0000ause' }),
    ],
  },
  {
    name: 'users/role',
    method: 'POST',
    path: '/api/console/users/role',
    permission: 'users.manage',
    validBody: ({ victimUserId }) => ({ id: victimUserId, role: 'oncall', reason: 'fuzz: joined the rota' }),
    mutates: true,
  },
  {
    name: 'users/disable',
    method: 'POST',
    path: '/api/console/users/disable',
    permission: 'users.manage',
    validBody: ({ victimUserId }) => ({ id: victimUserId, disabled: true, reason: 'fuzz: left the company' }),
    mutates: true,
  },
  {
    name: 'users/unlock',
    method: 'POST',
    path: '/api/console/users/unlock',
    permission: 'users.manage',
    validBody: ({ victimUserId }) => ({ id: victimUserId, reason: 'fuzz: locked out by a typo' }),
    mutates: true,
  },
  {
    name: 'users/password-reset',
    method: 'POST',
    path: '/api/console/users/password-reset',
    permission: 'users.manage',
    validBody: ({ victimUserId }) => ({ id: victimUserId, reason: 'fuzz: forgot the password' }),
    mutates: true,
  },
  {
    name: 'account/password',
    method: 'POST',
    path: '/api/console/account/password',
    permission: 'account.password',
    validBody: () => ({ currentPassword: 'not-the-fuzz-password', newPassword: 'violet-harbour-tractor-91' }),
    mutates: true,
    refusalWrites: ['users', 'audit_log'],
  },
  {
    name: 'account/mfa/begin',
    method: 'POST',
    path: '/api/console/account/mfa/begin',
    permission: 'account.mfa',
    validBody: () => ({ currentPassword: 'not-the-fuzz-password' }),
    mutates: true,
    refusalWrites: ['users', 'audit_log'],
  },
  {
    name: 'account/mfa/confirm',
    method: 'POST',
    path: '/api/console/account/mfa/confirm',
    permission: 'account.mfa',
    validBody: () => ({ code: '123456' }),
    mutates: true,
  },
  {
    name: 'account/mfa/recovery-codes',
    method: 'POST',
    path: '/api/console/account/mfa/recovery-codes',
    permission: 'account.mfa',
    validBody: () => ({ currentPassword: 'not-the-fuzz-password', code: '123456' }),
    mutates: true,
    refusalWrites: ['users', 'audit_log'],
  },
  {
    name: 'account/mfa/disable',
    method: 'POST',
    path: '/api/console/account/mfa/disable',
    permission: 'account.mfa',
    validBody: () => ({ currentPassword: 'not-the-fuzz-password', code: '123456' }),
    mutates: true,
    refusalWrites: ['users', 'audit_log'],
  },
  {
    name: 'users/mfa-reset',
    method: 'POST',
    path: '/api/console/users/mfa-reset',
    permission: 'users.manage',
    validBody: ({ victimUserId }) => ({ id: victimUserId, reason: 'fuzz: lost their phone' }),
    mutates: true,
  },
  {
    name: 'tokens (list)',
    method: 'GET',
    path: '/api/console/tokens',
    permission: 'tokens.manage',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'tokens (create)',
    method: 'POST',
    path: '/api/console/tokens',
    permission: 'tokens.manage',
    validBody: () => ({ name: 'fuzz producer', reason: 'fuzz: new producer', scopes: ['reminders:write'] }),
    mutates: true,
    regressionBodies: [
      JSON.stringify({ name: 'a\u0000b', reason: 'because', scopes: ['reminders:write'] }),
      JSON.stringify({ name: 'ab', reason: 'bec\u0000ause', scopes: ['reminders:write'] }),
    ],
  },
  {
    name: 'tokens/revoke',
    method: 'POST',
    path: '/api/console/tokens/revoke',
    permission: 'tokens.manage',
    validBody: ({ victimTokenId }) => ({ id: victimTokenId, reason: 'fuzz: leaked in a log' }),
    mutates: true,
    regressionBodies: [JSON.stringify({ id: '00000000-0000-4000-8000-000000000000', reason: 'bec\u0000ause' })],
  },
  {
    name: 'webhook-endpoints (list)',
    method: 'GET',
    path: '/api/console/webhook-endpoints',
    permission: 'webhooks.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'webhook-endpoints (create)',
    method: 'POST',
    path: '/api/console/webhook-endpoints',
    permission: 'webhooks.manage',
    validBody: () => ({ url: 'http://10.0.0.7/hooks', eventTypes: ['notice.sent'], reason: 'fuzz: a private address' }),
    mutates: true,
  },
  {
    name: 'webhook-endpoints/update',
    method: 'POST',
    path: '/api/console/webhook-endpoints/update',
    permission: 'webhooks.manage',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', enabled: false, reason: 'fuzz: disable' }),
    mutates: true,
  },
  {
    name: 'webhook-endpoints/rotate',
    method: 'POST',
    path: '/api/console/webhook-endpoints/rotate',
    permission: 'webhooks.manage',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', reason: 'fuzz: rotate' }),
    mutates: true,
  },
  {
    name: 'webhook-endpoints/test',
    method: 'POST',
    path: '/api/console/webhook-endpoints/test',
    permission: 'webhooks.manage',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000' }),
    mutates: true,
  },
  {
    name: 'webhook-endpoints/deliveries',
    method: 'GET',
    path: '/api/console/webhook-endpoints/deliveries',
    permission: 'webhooks.read',
    queryNames: ['endpoint', 'notice', 'before', 'limit'],
    mutates: false,
  },
  {
    name: 'webhook-endpoints/replay',
    method: 'POST',
    path: '/api/console/webhook-endpoints/replay',
    permission: 'webhooks.manage',
    validBody: () => ({ endpointId: '00000000-0000-4000-8000-000000000000', eventId: 1, reason: 'fuzz: replay' }),
    mutates: true,
  },
  {
    name: 'replays (list)',
    method: 'GET',
    path: '/api/console/replays',
    permission: 'replay.read',
    queryNames: [],
    mutates: false,
  },
  {
    name: 'replays (request)',
    method: 'POST',
    path: '/api/console/replays',
    permission: 'replay.request',
    validBody: () => ({ filter: { noticeType: 'renewal_notice_t72', source: 'test' }, reason: 'fuzz: backlog after the outage' }),
    mutates: true,
    extraBodies: fc.constant(null).chain(() => hostileReplayCsv.map((csv) => JSON.stringify({ csv, reason: 'fuzz: uploaded backlog' }))),
    regressionBodies: [
      JSON.stringify({ csv: 'type,subscription_id\n\u0000,1', reason: 'because' }),
      JSON.stringify({ csv: '"unterminated\n'.repeat(1_000), reason: 'because' }),
      JSON.stringify({
        csv: 'notice_type,subscription_id,period_start,recipient_email,due_at,deadline_at,payload\nrenewal_notice_t72,sub_1,2026-12-01,a@example.com,2026-12-01T09:00:00Z,2026-12-02T09:00:00Z,"{""a"":""\\u0000""}"',
        reason: 'because',
      }),
      JSON.stringify({
        csv: 'notice_type,subscription_id,period_start,recipient_email,due_at,deadline_at,payload\nrenewal_notice_t72,sub_2,2026-12-01,a@example.com,2026-12-01T09:00:00Z,2026-12-02T09:00:00Z,"{""a"":""\\ud800""}"',
        reason: 'because',
      }),
      JSON.stringify({
        csv: 'notice_type,subscription_id,period_start,recipient_email,due_at,deadline_at\nrenewal_notice_t72,sub_\ud800,2026-12-01,a@example.com,2026-12-01T09:00:00Z,2026-12-02T09:00:00Z\nrenewal_notice_t72,\ud800,bad,bad,bad,bad',
        reason: 'because',
      }),
    ],
  },
  {
    name: 'replays/dry-run',
    method: 'POST',
    path: '/api/console/replays/dry-run',
    permission: 'replay.request',
    validBody: () => ({ filter: { dueFrom: '2026-11-01T00:00:00Z', dueTo: '2026-12-31T00:00:00Z', noticeType: 'renewal_notice_t72' } }),
    mutates: false,
    extraBodies: fc.constant(null).chain(() => hostileReplayCsv.map((csv) => JSON.stringify({ csv }))),
    regressionBodies: [
      JSON.stringify({ csv: 'type,subscription_id,period_start\nrenewal_notice_t72,\u202Esub,2026-02-30' }),
      JSON.stringify({ csv: '\uFEFFtype\r\n' + "'; drop table notice_ledger; --,<script>,../../etc/passwd\r\n".repeat(200) }),
      JSON.stringify({ csv: ',,,,\n'.repeat(5_000) }),
    ],
  },
  {
    name: 'replays/decide',
    method: 'POST',
    path: '/api/console/replays/decide',
    permission: 'replay.approve',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', decision: 'approve', reason: 'fuzz: looks right' }),
    mutates: true,
  },
  {
    name: 'replays/run',
    method: 'POST',
    path: '/api/console/replays/run',
    permission: 'replay.request',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', reason: 'fuzz: go' }),
    mutates: true,
  },
  {
    name: 'replays/cancel',
    method: 'POST',
    path: '/api/console/replays/cancel',
    permission: 'replay.request',
    validBody: () => ({ id: '00000000-0000-4000-8000-000000000000', reason: 'fuzz: wrong filter' }),
    mutates: true,
  },
  {
    name: 'replays/status',
    method: 'GET',
    path: '/api/console/replays/status',
    permission: 'replay.read',
    queryNames: ['id'],
    mutates: false,
  },
  {
    name: 'replays/rejected',
    method: 'GET',
    path: '/api/console/replays/rejected',
    permission: 'replay.read',
    queryNames: ['id'],
    mutates: false,
  },
  {
    name: 'reports',
    method: 'GET',
    path: '/api/console/reports',
    permission: 'reports.read',
    queryNames: ['granularity', 'from', 'to'],
    mutates: false,
    regressions: [
      [
        ['from', '2026-02-30'],
        ['to', '2026-03-01'],
      ],
      [
        ['from', '0000-01-01'],
        ['to', '0000-02-01'],
      ],
      [
        ['from', '9999-12-01'],
        ['to', '9999-12-31'],
      ],
    ],
  },
  {
    name: 'reports/csv',
    method: 'GET',
    path: '/api/console/reports/csv',
    permission: 'reports.read',
    queryNames: ['granularity', 'from', 'to'],
    mutates: false,
    regressions: [
      [
        ['from', '2026-01-01\r\nSet-Cookie: a=b'],
        ['to', '2026-02-01'],
      ],
      [
        ['from', '0000-01-01'],
        ['to', '0000-02-01'],
      ],
    ],
  },
  {
    name: 'recipients (view)',
    method: 'GET',
    path: '/api/console/recipients',
    permission: 'lookup.read',
    queryNames: ['email'],
    mutates: false,
    regressions: [[['email', 'a\u0000b@example.com']], [['email', 'customer0@example.com']]],
  },
  {
    name: 'recipients/suppression',
    method: 'POST',
    path: '/api/console/recipients/suppression',
    permission: 'recipients.manage',
    validBody: () => ({ email: 'customer1@example.com', action: 'add', reason: 'fuzz: the customer asked' }),
    mutates: true,
    regressionBodies: [JSON.stringify({ email: 'customer1@example.com', action: 'add', reason: 'fuzz\u0000' })],
  },
  {
    name: 'recipients/preference',
    method: 'POST',
    path: '/api/console/recipients/preference',
    permission: 'recipients.manage',
    validBody: () => ({ email: 'customer2@example.com', category: 'courtesy', state: 'opted_out', reason: 'fuzz: the customer asked' }),
    mutates: true,
    regressionBodies: [JSON.stringify({ email: 'customer2@example.com', category: 'required', state: 'opted_out', reason: 'fuzz: required' })],
  },
  {
    name: 'recipients/cancel',
    method: 'POST',
    path: '/api/console/recipients/cancel',
    permission: 'recipients.manage',
    validBody: () => ({ jobId: '00000000-0000-4000-8000-000000000000', reason: 'fuzz: the customer asked' }),
    mutates: true,
  },
];

const csvCell = fc.oneof(
  plausibleString,
  hostileString.filter((text) => text.length < 500),
  fc.constantFrom(
    'renewal_notice_t72',
    'payment_recovery',
    'customer@example.com',
    '2026-12-01T09:00:00Z',
    '2026-12-02T09:00:00Z',
    'Europe/Berlin',
    '{"plan_name":"Team"}',
    '{"a":"\\u0000"}',
    '{"a":"\\ud800"}',
    '{"\\u0000":1}',
    '[1,2]',
    '"quoted, with comma"',
    '"unterminated',
  ),
);

/** An uploaded replay list: the real header, then rows of hostile cells (CSV-quoted or not). */
export const hostileReplayCsv: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(
      'notice_type,subscription_id,period_start,recipient_email,due_at,deadline_at,payload',
      'notice_type,account_id,reconciliation_id,exception_id,recipient_email,due_at,deadline_at,customer_id,evidence_ref,payload',
    ),
    fc.array(fc.array(fc.tuple(csvCell, fc.boolean()), { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 6 }),
    fc.constantFrom('\n', '\r\n', '\r'),
  )
  .map(([header, rows, newline]) =>
    [header, ...rows.map((cells) => cells.map(([cell, quoted]) => (quoted ? `"${cell.replace(/"/g, '""')}"` : cell)).join(','))].join(newline),
  );

/** What each console route needs, by DESIGN.md: lib/api/routes.test.ts holds every contract to it. */
export const expectedPermissions: Record<string, Permission> = Object.fromEntries(listed.map((route) => [`${route.method} ${route.path}`, route.permission]));

/** The route list's console part with its fuzz inputs; the handler is the route file's own export. */
export const consoleHandlers: readonly (ConsoleHandler & { load: () => Promise<(request: Request) => Promise<Response>> })[] = consoleRouteContracts.map(
  (contract) => {
    const route = listed.find((candidate) => candidate.method === contract.method && candidate.path === contract.path);
    if (!route) throw new Error(`${contract.method} ${contract.path} has no entry in test/fuzz/console-handlers.ts`);
    return { ...route, load: () => loadRouteHandler(contract) };
  },
);
