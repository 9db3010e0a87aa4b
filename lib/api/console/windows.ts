import { z } from 'zod';
import { consoleContract, noInput } from '@/lib/http/contract';
import { cursorTimestamp, instant, reason } from '@/lib/api/fields';

/** Send windows: at risk, missed, compliance gaps (the Windows page and the overview's banner), and the loaded notice configuration. */

const count = z.number().int().nonnegative();

/** The Windows page's tabs (`?tab=`), here so the server page and the client view share them. */
export const windowTabs = ['at-risk', 'missed', 'gaps'] as const;
export type WindowTab = (typeof windowTabs)[number];
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a job id');

export const windowsSummary = z.object({
  generatedAt: instant,
  /** WINDOW_AT_RISK_WITHIN: a window closing sooner than this, not yet sent, is at risk. */
  atRiskWithinMs: z.number().int().positive(),
  totals: z.object({ atRisk: count, missed24h: count, missed7d: count, gaps: count }),
  /** By notice type × region; region `none` for a notice scheduled without one. */
  rows: z.array(
    z.object({
      noticeType: z.string(),
      label: z.string(),
      category: z.string().nullable(),
      region: z.string(),
      atRisk: count,
      missed24h: count,
      missed7d: count,
      gaps: count,
    }),
  ),
});
export type WindowsSummary = z.infer<typeof windowsSummary>;

export const windowJob = z.object({
  id: z.string(),
  noticeKey: z.string(),
  noticeType: z.string(),
  category: z.string(),
  region: z.string().nullable(),
  subjectId: z.string(),
  state: z.string(),
  dueAt: instant,
  /** Null: the window opens at dueAt (a reminder scheduled without an anchor). */
  windowEarliest: instant.nullable(),
  windowLatest: instant,
  ruleIds: z.array(z.string()),
  ruleSetVersion: z.string().nullable(),
  suppressionReason: z.string().nullable(),
  /** Attempts so far; with lastErrorClass on a pending notice: retrying after that failure (at risk past MAX_ATTEMPTS). */
  attempts: z.number().int().nonnegative(),
  lastErrorClass: z.string().nullable(),
  updatedAt: instant,
});
export type WindowJobView = z.infer<typeof windowJob>;

const jobCursor = z.object({ afterAt: z.string(), afterId: z.string() });

export const jobPageQuery = z.object({ afterAt: cursorTimestamp.optional(), afterId: uuid.optional() });

export const atRiskPage = z.object({ generatedAt: instant, atRiskWithinMs: z.number().int().positive(), rows: z.array(windowJob), next: jobCursor.nullable() });
export type AtRiskPage = z.infer<typeof atRiskPage>;

export const missedPage = z.object({ generatedAt: instant, rows: z.array(windowJob), next: jobCursor.nullable() });
export type MissedPage = z.infer<typeof missedPage>;

export const gapRow = z.object({
  id: z.number().int().positive(),
  noticeType: z.string(),
  label: z.string(),
  reason: z.string(),
  detail: z.string().nullable(),
  ruleIds: z.array(z.string()),
  ruleSetVersion: z.string(),
  region: z.string(),
  createdAt: instant,
  eventType: z.string(),
  identity: z.record(z.string(), z.string()),
  anchorAt: instant,
  revision: z.number().int().nonnegative(),
});
export type GapView = z.infer<typeof gapRow>;

export const gapPageQuery = z.object({ afterAt: cursorTimestamp.optional(), afterId: z.coerce.number().int().positive().optional() });

export const gapPage = z.object({ generatedAt: instant, rows: z.array(gapRow), next: z.object({ afterAt: z.string(), afterId: z.number().int() }).nullable() });
export type GapPage = z.infer<typeof gapPage>;

export const resolveGapRequest = z.strictObject({ id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER), reason: reason() });

export const resolveGapOutcome = z.object({ id: z.number().int().positive(), resolvedAt: instant, resolvedBy: z.string() });
export type ResolveGapOutcome = z.infer<typeof resolveGapOutcome>;

const merchantWindow = z.object({ fromMs: z.number(), toMs: z.number() }).nullable();

export const noticeConfigView = z.object({
  file: z.string(),
  ruleSetVersion: z.string(),
  eventTypes: z.array(z.object({ name: z.string(), label: z.string(), identity: z.array(z.string()), anchor: z.string(), subjectField: z.string() })),
  noticeTypes: z.array(
    z.object({
      name: z.string(),
      label: z.string(),
      event: z.string(),
      identity: z.array(z.string()),
      channel: z.string(),
      category: z.string(),
      window: merchantWindow,
      obligation: z.string().nullable(),
      quietHours: z.string().nullable(),
      template: z.string(),
      correction: z.string(),
      enabled: z.boolean(),
    }),
  ),
  rules: z.array(
    z.object({
      id: z.string(),
      version: z.number().int(),
      title: z.string(),
      jurisdiction: z.string(),
      obligation: z.string(),
      anchor: z.string(),
      window: z.object({ unit: z.string(), min: z.number().nullable(), max: z.number().nullable() }),
      dutyHolder: z.string(),
      sourceUrl: z.string(),
      checkedAt: z.string(),
      unconfirmed: z.array(z.string()),
      enabled: z.boolean(),
    }),
  ),
});
export type NoticeConfigView = z.infer<typeof noticeConfigView>;

export const getWindowsSummary = consoleContract({
  method: 'GET',
  path: '/api/console/windows/summary',
  permission: 'windows.read',
  input: noInput,
  output: windowsSummary,
});

export const listAtRisk = consoleContract({
  method: 'GET',
  path: '/api/console/windows/at-risk',
  permission: 'windows.read',
  input: jobPageQuery,
  output: atRiskPage,
});

export const listMissed = consoleContract({
  method: 'GET',
  path: '/api/console/windows/missed',
  permission: 'windows.read',
  input: jobPageQuery,
  output: missedPage,
});

export const listGaps = consoleContract({ method: 'GET', path: '/api/console/windows/gaps', permission: 'windows.read', input: gapPageQuery, output: gapPage });

export const resolveGapContract = consoleContract({
  method: 'POST',
  path: '/api/console/windows/gaps/resolve',
  permission: 'gaps.resolve',
  input: resolveGapRequest,
  output: resolveGapOutcome,
});

export const getNoticeConfig = consoleContract({
  method: 'GET',
  path: '/api/console/notice-config',
  permission: 'notice_config.read',
  input: noInput,
  output: noticeConfigView,
});
