import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DbOrTx } from '@/db/client';
import { storedBody } from '@/db/queries/evidence-body';
import { insertEvidenceForRecordedNotice, type NewEvidenceEntry } from '@/db/queries/evidence-record';
import type { JobRow } from '@/db/schema/jobs';
import { evidenceForSetting } from '@/lib/config';
import { messageIdFor } from '@/lib/ledger/notice-key';
import type { Shown } from '@/lib/channels/types';
import type { RenderTrace } from '@/lib/templates/compiled';
import { templatesOf } from '@/lib/templates/load';
import { joinTrace, storedTrace } from '@/lib/templates/trace';
import type { NoticeConfig, RuleSet } from '@/lib/windows/load-config';
import { ruleRef } from '@/lib/windows/rules';
import { canonicalJson, sha256Hex } from './hash';

/**
 * What the evidence record says (issue 28 item 1). Bodies are built here, pure apart from the
 * template files' digest (read once per template), and appended by their writers: the worker
 * in a send's result commit (sendEvidenceEntry), the webhooks, the recipient page and the console through
 * recordNoticeEvidence, which writes only for a notice whose send already started its record.
 */

export const evidenceKinds = [
  'notice.sent',
  'notice.outcome',
  'provider.event',
  'recipient.page_view',
  'recipient.cancel_request',
  'recipient.preference',
  'ledger.resolved',
  'replay.approved',
] as const;
export type EvidenceKind = (typeof evidenceKinds)[number];

/** EVIDENCE_FOR: categories (`required`, `courtesy`), notice type names, `all` or `none`. */
export type EvidenceSelection = { all: boolean; categories: ReadonlySet<string>; types: ReadonlySet<string> };

export function parseEvidenceSelection(text: string): EvidenceSelection {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '' && part !== 'none');
  const isCategory = (part: string) => part === 'required' || part === 'courtesy';
  return {
    all: parts.includes('all'),
    categories: new Set(parts.filter(isCategory)),
    types: new Set(parts.filter((part) => !isCategory(part) && part !== 'all')),
  };
}

export function evidenceWanted(selection: EvidenceSelection, job: Pick<JobRow, 'noticeType' | 'category'>): boolean {
  return selection.all || selection.categories.has(job.category) || selection.types.has(job.noticeType);
}

/** `a***@example.com`, `+44*******890`: enough to tell recipients apart, not to mail them. */
export function maskRecipient(address: string): string {
  const at = address.lastIndexOf('@');
  if (at > 0) return `${address.slice(0, 1)}***${address.slice(at)}`;
  if (address.length <= 4) return '*'.repeat(address.length);
  return `${address.slice(0, 3)}${'*'.repeat(Math.max(0, address.length - 6))}${address.slice(-3)}`;
}

/** The identity as a digest a merchant can recompute from its own records: SHA-256 of its canonical JSON. */
export const identityDigest = (identity: Record<string, string>) => sha256Hex(canonicalJson(identity));

const templateDigests = new Map<string, string>();

/** SHA-256 over the template's declared variables and every file it renders from (names and bytes), once per process. */
export function templateDigest(config: NoticeConfig, templateId: string): string | null {
  const cached = templateDigests.get(`${config.file}\0${templateId}`);
  if (cached) return cached;
  let set;
  try {
    set = templatesOf(config);
  } catch {
    return null;
  }
  const entry = set.entries.get(templateId);
  if (!entry) return null;
  const files = [...new Set([...entry.email.values(), ...entry.sms.values()].flatMap((template) => template.files))].sort();
  const contents = files.map((file) => {
    try {
      return { file, sha256: sha256Hex(readFileSync(path.resolve(set.directory, file))) };
    } catch {
      return { file, sha256: null };
    }
  });
  const digest = sha256Hex(canonicalJson({ variables: entry.definition.variables, files: contents }));
  templateDigests.set(`${config.file}\0${templateId}`, digest);
  return digest;
}

/**
 * The message as the capture keeps it from compose to commit: an email's HTML as its render trace
 * (lib/templates/trace.ts) where the compiled renderer made one, so the ~10 KB string is not held
 * across the send; as the HTML itself where LiquidJS rendered it.
 */
export type RenderedForEvidence =
  | { channel: 'email'; subject: string; text: string; html: string; htmlTrace: null }
  | { channel: 'email'; subject: string; text: string; html: null; htmlTrace: RenderTrace }
  | { channel: 'sms'; body: string };

/** What the capture keeps of a composed message (lib/jobs/handle-wakeup.ts composeCaptured). */
export function forEvidence(rendered: Shown['rendered']): RenderedForEvidence {
  if (rendered.channel === 'sms') return rendered;
  const { subject, text } = rendered;
  return rendered.htmlTrace
    ? { channel: 'email', subject, text, html: null, htmlTrace: rendered.htmlTrace }
    : { channel: 'email', subject, text, html: rendered.html, htmlTrace: null };
}

/** The entry's message: the HTML as a stored trace when its pieces are stored, else in full (joined from the trace if need be). */
function messageOf(rendered: RenderedForEvidence, piecesStored: boolean): Record<string, unknown> {
  if (rendered.channel === 'sms') return { smsBody: rendered.body };
  if (rendered.htmlTrace && piecesStored) return { subject: rendered.subject, htmlTrace: storedTrace(rendered.htmlTrace).trace, text: rendered.text };
  return { subject: rendered.subject, html: rendered.html ?? htmlOfTrace(rendered.htmlTrace), text: rendered.text };
}

function htmlOfTrace(trace: RenderTrace): string {
  const { trace: stored, pieces } = storedTrace(trace);
  const joined = joinTrace(stored, Object.fromEntries([...pieces].map(([digest, value]) => [digest, value.texts])));
  if (!joined.ok) throw new Error(`the render trace does not join: ${joined.problem}`);
  return joined.text;
}

export type SendFacts = {
  job: JobRow;
  rendered: RenderedForEvidence;
  manageUrl: string;
  claimCommittedAt: Date;
  sendStartedAt: Date;
  sendFinishedAt: Date;
  providerMessageId: string | null;
  outcome: string;
  /** The trace's pieces are stored (lib/evidence/pieces.ts): the entry may name them instead of holding the HTML. */
  piecesStored?: boolean;
};

export type EvidenceContext = { config: NoticeConfig; ruleSet: RuleSet | null; messageIdDomain: string };

const numberish = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : null);

/** The send's entry: the business fact, why the window was what it was, what was sent, and proof of sending. */
export function sendEntryBody(context: EvidenceContext, facts: SendFacts): Record<string, unknown> {
  const { job } = facts;
  const type = Object.hasOwn(context.config.noticeTypes, job.noticeType) ? context.config.noticeTypes[job.noticeType] : undefined;
  const rules = (job.ruleIds ?? []).map((id) => {
    // A job holds the planner's references (`id@version`, lib/windows/rules.ts ruleRef); a bare id names the rule too.
    const rule = context.ruleSet?.rules.find((candidate) => ruleRef(candidate) === id || candidate.id === id);
    return rule ? { id, version: rule.version, title: rule.title, sourceUrl: rule.sourceUrl, obligation: rule.obligation } : { id };
  });
  const payload = job.payload;
  const quiet = type?.quietHours ?? context.config.quietHours;
  return {
    fact: {
      noticeType: job.noticeType,
      category: job.category,
      eventId: job.eventId,
      revision: job.revision,
      identityDigest: identityDigest(job.identity),
      anchorAt: job.anchorAt?.toISOString() ?? null,
      contract: {
        amount: numberish(payload.amount),
        currency: numberish(payload.currency),
        frequency: numberish(payload.frequency ?? payload.billing_interval),
      },
    },
    window: {
      ruleIds: job.ruleIds ?? [],
      ruleSetVersion: job.ruleSetVersion,
      rules,
      region: job.region,
      earliest: job.windowEarliest?.toISOString() ?? null,
      latest: job.deadlineAt.toISOString(),
      quietHours: quiet ? JSON.parse(JSON.stringify(quiet)) : null,
      recipientTimeZone: job.recipientTimeZone,
    },
    message: {
      templateId: type?.template ?? null,
      templateDigest: type ? templateDigest(context.config, type.template) : null,
      locale: job.recipientLocale,
      ...messageOf(facts.rendered, facts.piecesStored === true),
      shown: {
        cancelLink: facts.manageUrl,
        amount: numberish(payload.amount),
        currency: numberish(payload.currency),
        date: job.anchorAt?.toISOString() ?? null,
        frequency: numberish(payload.frequency ?? payload.billing_interval),
      },
    },
    sending: {
      channel: job.channel,
      recipient: maskRecipient((job.channel === 'sms' ? job.recipientPhone : job.recipientEmail) ?? ''),
      claimCommittedAt: facts.claimCommittedAt.toISOString(),
      sendStartedAt: facts.sendStartedAt.toISOString(),
      sendFinishedAt: facts.sendFinishedAt.toISOString(),
      outcome: facts.outcome,
      providerMessageId: facts.providerMessageId,
      messageId: job.channel === 'email' ? messageIdFor(job.noticeKey, context.messageIdDomain) : null,
    },
  };
}

export function entryOf({
  noticeKey,
  jobId,
  kind,
  body,
}: {
  noticeKey: string;
  jobId: string | null;
  kind: EvidenceKind;
  body: Record<string, unknown>;
}): NewEvidenceEntry {
  // Its stored form once, here: every writer and a coalesced commit's retry alone take it as it is.
  return { noticeKey, jobId, kind, body: storedBody(canonicalJson(body)) };
}

/**
 * The worker's side of the record: which jobs keep one, and what a send's entry is built from. The
 * entry itself is written by the send's result commit (lib/evidence/send-evidence.ts), in the same
 * statement or transaction, so the coalescing of commits carries it too.
 */
export type EvidenceRecorder = {
  wants: (job: Pick<JobRow, 'noticeType' | 'category'>) => boolean;
  context: EvidenceContext;
};

export function createEvidenceRecorder({ selection, context }: { selection: EvidenceSelection; context: EvidenceContext }): EvidenceRecorder {
  return { wants: (job) => evidenceWanted(selection, job), context };
}

/** A provider's event as the record keeps it: what it says and when, the recipient masked, none of its payload. */
export function providerEventEvidence(event: {
  provider: string;
  eventId: string;
  type: string;
  rawType: string;
  occurredAt: Date;
  providerMessageId: string | null;
  messageId?: string | null;
  bounceType: string | null;
  recipient: string | null;
}): Record<string, unknown> {
  return {
    provider: event.provider,
    eventId: event.eventId,
    type: event.type,
    rawType: event.rawType,
    occurredAt: event.occurredAt.toISOString(),
    providerMessageId: event.providerMessageId,
    messageId: event.messageId ?? null,
    bounceType: event.bounceType,
    recipient: event.recipient ? maskRecipient(event.recipient) : null,
  };
}

/** EVIDENCE_FOR as lib/config.ts validates it, for the writers outside the worker (webhooks, recipient page, console). */
export function evidenceSelection(): EvidenceSelection {
  return parseEvidenceSelection(evidenceForSetting());
}

/** A later fact about a notice: written when its type keeps a record (insertEvidenceForRecordedNotice). */
export async function recordNoticeEvidence(
  db: DbOrTx,
  { noticeKey, jobId = null, kind, body }: { noticeKey: string; jobId?: string | null; kind: EvidenceKind; body: Record<string, unknown> },
  selection: EvidenceSelection = evidenceSelection(),
): Promise<boolean> {
  return insertEvidenceForRecordedNotice(db, entryOf({ noticeKey, jobId, kind, body }), {
    all: selection.all,
    categories: [...selection.categories],
    types: [...selection.types],
  });
}
