import type { NoticeAttempt, NoticeJob, NoticeLedgerEntry } from '@/db/queries/lookup';
import type { NoticeWindow } from '@/lib/api/console/lookup';
import { formatInZone, formatUtc } from './format';

/**
 * The lookup's account of a notice's send window: [window_earliest ?? due_at, deadline_at] in the
 * recipient's zone and in UTC, which rules (and rule set, and business event) set it, and what the
 * send path did about it — read from the attempts it recorded (`deferred` early / quiet hours,
 * `suppressed_policy` window_missed / quiet_hours_cover_window, `sent` quiet_hours_overridden).
 */
export function describeWindow({ job, attempts, ledger }: { job: NoticeJob; attempts: NoticeAttempt[]; ledger: NoticeLedgerEntry | null }): NoticeWindow {
  const earliest = (job.windowEarliest ?? job.dueAt).toISOString();
  const latest = job.deadlineAt.toISOString();
  const zone = job.recipientTimeZone;
  const rules = job.ruleIds.length > 0 ? `rule${job.ruleIds.length === 1 ? '' : 's'} ${job.ruleIds.join(', ')}` : null;
  const ruleSet = job.ruleSetVersion ? `rule set ${job.ruleSetVersion}` : null;
  const event = job.event ? `business event ${job.event.type} revision ${job.event.revision} (anchor ${formatUtc(job.event.anchorAt.toISOString())})` : null;
  const setBy = rules
    ? `Set by ${rules}${ruleSet ? ` of ${ruleSet}` : ''}${job.region ? ` for region ${job.region}` : ''}${event ? `, planned from ${event}` : ''}.`
    : event
      ? `Set by the notice type's merchant window${ruleSet ? ` (${ruleSet})` : ''}, planned from ${event}.`
      : `Set by the producer: its due time and deadline (no rules applied).`;

  const events: NoticeWindow['events'] = [];
  for (const attempt of attempts) {
    const at = attempt.startedAt.toISOString();
    if (attempt.outcome === 'deferred' && attempt.detail === 'early') {
      events.push({ at, kind: 'deferred_early', text: `Woken before the window opened (${formatUtc(earliest)}): deferred to it, no attempt counted.` });
    } else if (attempt.outcome === 'deferred' && attempt.detail === 'quiet_hours') {
      events.push({ at, kind: 'deferred_quiet_hours', text: "Inside the recipient's quiet hours: deferred to their end, which is inside the window." });
    } else if (attempt.outcome === 'suppressed_policy' && (attempt.detail === 'quiet_hours_cover_window' || attempt.detail === 'quiet_hours_past_deadline')) {
      events.push({
        at,
        kind: 'window_missed',
        text: `window_missed: the recipient's quiet hours covered the rest of the window (until ${formatUtc(latest)}); a courtesy notice is not sent inside them.`,
      });
    } else if (attempt.outcome === 'suppressed_policy' && (attempt.detail === 'window_missed' || attempt.detail === 'deadline_passed')) {
      events.push({ at, kind: 'window_missed', text: `window_missed: woken after the window closed (${formatUtc(latest)}); it is never sent late.` });
    } else if (attempt.outcome === 'sent' && attempt.detail === 'quiet_hours_overridden') {
      events.push({
        at,
        kind: 'quiet_hours_overridden',
        text: "Sent inside the recipient's quiet hours: they covered the rest of a required notice's window.",
      });
    }
  }

  const missed = events.some((entry) => entry.kind === 'window_missed') || (job.state === 'suppressed' && job.suppressionReason === 'window_missed');
  const sentAt = ledger?.sentAt ?? null;
  const status = missed
    ? `Missed: the window closed at ${formatInZone(latest, zone)} before the notice could go out, so it was not sent.`
    : sentAt
      ? // A provisional hand-over the provider then dropped (SendGrid) was handed over in the window, never sent.
        `${ledger?.providerStatus === 'dropped' ? 'Handed over inside its window (the provider then dropped it)' : 'Sent inside its window'}, at ${formatInZone(sentAt.toISOString(), zone)}.`
      : job.state === 'pending'
        ? `Open until ${formatInZone(latest, zone)}; the notice waits for ${formatUtc(job.nextAttemptAt.toISOString())}.`
        : `The window ran ${formatUtc(earliest)} – ${formatUtc(latest)}; the notice is ${job.state}.`;

  return {
    earliest,
    latest,
    timeZone: zone,
    earliestLocal: formatInZone(earliest, zone),
    latestLocal: formatInZone(latest, zone),
    category: job.category,
    region: job.region,
    ruleIds: job.ruleIds,
    ruleSetVersion: job.ruleSetVersion,
    event: job.event
      ? {
          id: job.event.id,
          type: job.event.type,
          revision: job.event.revision,
          anchorAt: job.event.anchorAt.toISOString(),
          anchorLocal: formatInZone(job.event.anchorAt.toISOString(), zone),
          source: job.event.source,
        }
      : null,
    setBy,
    events,
    status,
  };
}
