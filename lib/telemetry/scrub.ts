import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';

type AttributeValue = ReadableSpan['attributes'][string];

export const REDACTED = '[redacted]';

/**
 * Path segments that are credentials or personal data: the recipient page's signed token
 * (`/r/<token>/…`), anything under `/api/recipient/` after its action (the one-click unsubscribe
 * token, `/api/recipient/unsubscribe/<token>`), and the producer's `/api/v1/recipients/<email>`.
 * A route pattern's placeholder (Next's `/r/[token]`, a contract's `{email}`) is kept: it names the route.
 */
const secretSegment = /(\/r\/|\/api\/recipient\/[^/?#\s]+\/|\/api\/v1\/recipients\/)([^/?#\s]+)/g;
/** Every value of a query string (`?q=ada@example.com&x=1`): lookups carry emails and phone numbers. */
const queryValue = /([?&][^=&#\s]*=)([^&#\s]*)/g;

/** One string with every secret path segment and query value replaced by `[redacted]`. */
export function scrubUrlText(value: string): string {
  if (!value.includes('/') && !value.includes('=')) return value;
  return value
    .replace(secretSegment, (match, prefix: string, segment: string) => (/^(\[[^\]]*\]|\{[^}]*\})$/.test(segment) ? match : `${prefix}${REDACTED}`))
    .replace(queryValue, (_match, name: string) => `${name}${REDACTED}`);
}

function scrubValue(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return scrubUrlText(value);
  if (Array.isArray(value)) return value.map((item: unknown) => (typeof item === 'string' ? scrubUrlText(item) : item)) as AttributeValue;
  return value;
}

function scrubAttributes(attributes: ReadableSpan['attributes']): ReadableSpan['attributes'] {
  return Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key, scrubValue(value)]));
}

/** The span as exporters read it, with its name, attributes and events' attributes scrubbed. */
export function scrubSpan(span: ReadableSpan): ReadableSpan {
  return {
    name: scrubUrlText(span.name),
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status.message ? { ...span.status, message: scrubUrlText(span.status.message) } : span.status,
    attributes: scrubAttributes(span.attributes),
    links: span.links.map((link) => (link.attributes ? { ...link, attributes: scrubAttributes(link.attributes) } : link)),
    events: span.events.map((event) => (event.attributes ? { ...event, attributes: scrubAttributes(event.attributes) } : event)),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/**
 * Wraps the processor that exports: every ended span, Next's own included (its request span
 * records `http.target` as the raw URL, the recipient token and a lookup's `?q=` with it), reaches
 * it scrubbed. Scrubbing every string attribute rather than a list of URL keys keeps a future
 * instrumentation's `url.full` or `http.url` out as well; our own attributes are ids and never
 * hold a path or a query.
 */
export class ScrubbingSpanProcessor implements SpanProcessor {
  constructor(private readonly delegate: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.delegate.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.delegate.onEnd(scrubSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.delegate.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.delegate.shutdown();
  }
}
