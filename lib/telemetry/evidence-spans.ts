import type { WebhookSummary } from '@/lib/api/webhooks';
import type { IngestSummary } from '@/lib/events/ingest';
import type { NormalizedEvent, WebhookProvider } from '@/lib/events/types';
import type { Result } from '@/lib/http/refusal';
import { correlationOf } from '@/lib/ledger/notice-key';
import { correlationAttribute, SpanKind, tracingInstalled, withSpan } from './tracing';

/**
 * Provider evidence as spans: a webhook request (`webhook.receive`), the events it stored
 * (`evidence.ingest`, one span event per event, carrying its correlation — the link to the
 * notice's send — and its normalized type) and the periodic reconciliation (`evidence.reconcile`,
 * one span event per claim it confirmed). Never the recipient, the provider's raw payload or the
 * full notice key.
 */

export function traceWebhook(provider: WebhookProvider, receive: () => Promise<Result<WebhookSummary>>): Promise<Result<WebhookSummary>> {
  return withSpan(
    'webhook.receive',
    { 'webhook.provider': provider },
    async (span) => {
      const result = await receive();
      if (!result.ok) span.setAttribute('webhook.refused', result.refusal.kind);
      else span.setAttributes({ 'webhook.received': result.data.received, 'webhook.skipped': result.data.skippedCount });
      return result;
    },
    { kind: SpanKind.SERVER },
  );
}

export function traceIngest(events: NormalizedEvent[], ingest: () => Promise<IngestSummary>): Promise<IngestSummary> {
  if (!tracingInstalled()) return ingest();
  return withSpan('evidence.ingest', { 'evidence.received': events.length }, async (span) => {
    for (const event of events) span.addEvent('evidence.event', { 'evidence.type': event.type, ...correlationAttribute(event.correlationId) });
    const summary = await ingest();
    span.setAttributes({
      'evidence.stored': summary.stored,
      'evidence.duplicates': summary.duplicates,
      'evidence.linked': summary.linked,
      'evidence.confirmed': summary.confirmed.length,
      'evidence.suppressions_added': summary.suppressed.length,
    });
    for (const key of summary.confirmed) span.addEvent('evidence.claim_confirmed', { 'notice.correlation': correlationOf(key) });
    return summary;
  });
}

export function traceReconcile(reconcile: () => Promise<{ confirmed: string[] }>): Promise<{ confirmed: string[] }> {
  if (!tracingInstalled()) return reconcile();
  return withSpan(
    'evidence.reconcile',
    {},
    async (span) => {
      const result = await reconcile();
      span.setAttribute('evidence.confirmed', result.confirmed.length);
      for (const key of result.confirmed) span.addEvent('evidence.claim_confirmed', { 'notice.correlation': correlationOf(key) });
      return result;
    },
    { root: true },
  );
}
