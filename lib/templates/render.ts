import { compile } from 'html-to-text';
import type { Template } from 'liquidjs';
import { compiledFor, type RenderTrace, type TracePart } from './compiled';
import { htmlEngine, textEngine } from './engine';
import { compileLayout, type TemplateSet } from './load';
import { canonicalLocale } from '@/lib/api/fields';

/**
 * Rendering one notice from its template. The inputs are the notice's own facts — its template,
 * category, anchor and window, the recipient's locale and time zone, the declared payload values,
 * the one-time code and the links the notice must show — and nothing else: a payload key the
 * template does not declare never reaches it. Any problem (no template, a missing value, a
 * filter that fails) is a RenderError with a reason that names the template, channel, locale
 * and variable, never a value.
 */

export type NoticeLinks = {
  /** The recipient's page for this notice: manage, cancel. Every email shows it. */
  manage: string;
  /** One-click unsubscribe; null for a required notice, which says it is legally required instead. */
  unsubscribe?: string | null;
};

export type RenderRequest = {
  template: string;
  noticeType: string;
  category: 'required' | 'courtesy';
  /** BCP 47; null: the fallback locale. */
  locale: string | null;
  timeZone: string;
  payload: Record<string, unknown>;
  /** The instant the notice is about (the charge); null when the notice was scheduled without one. */
  anchorAt: Date | null;
  /** The last instant the notice may go out. */
  windowClosesAt: Date | null;
  code: string;
  links: NoticeLinks;
  /** The recipient page offers to cancel (the type has `cancel`): the button says so; otherwise it offers the details. */
  cancellable?: boolean;
  /** Give the HTML's render trace too (RenderedEmail.htmlTrace), for the evidence record; a notice that keeps none renders without it. */
  traceHtml?: boolean;
};

/**
 * `htmlTrace`: the HTML as the layout's and the body template's static pieces and the values
 * between them (lib/templates/compiled.ts), for the evidence record; null where LiquidJS rendered
 * it (a template outside the compiled subset), and then the record keeps the HTML itself.
 */
export type RenderedEmail = { subject: string; html: string; text: string; locale: string; htmlTrace: RenderTrace | null };
export type RenderedSms = { text: string; locale: string };

export class RenderError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'RenderError';
  }
}

/** `de-AT` → de-AT, de, then the fallback: the first locale the template has. */
export function localeCandidates(locale: string | null, fallbackLocale: string): string[] {
  const candidates: string[] = [];
  const canonical = locale === null ? null : canonicalLocale(locale);
  if (canonical) {
    const parts = canonical.split('-');
    for (let length = parts.length; length >= 1; length -= 1) candidates.push(parts.slice(0, length).join('-'));
  }
  candidates.push(fallbackLocale);
  return [...new Set(candidates)];
}

/** The first of the locale's candidates the map has: the one choice renderEmail, renderSms and a template version make alike. */
export function pickLocale<T>(byLocale: ReadonlyMap<string, T>, locale: string | null, fallbackLocale: string): { locale: string; value: T } | null {
  for (const candidate of localeCandidates(locale, fallbackLocale)) {
    const value = byLocale.get(candidate);
    if (value) return { locale: candidate, value };
  }
  return null;
}

/**
 * The text part of a body without its own text template. Compiled once: `convert(html, options)`
 * builds the selector decision tree again on every call, which was 8 % of the worker's CPU per
 * notice in a profile (issue 27); `compile` is html-to-text's own way to convert many documents
 * with one set of options, and `convert` is exactly `compile(options)(html)`.
 */
const htmlToText = compile({ wordwrap: 78, selectors: [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true } }] });

function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 200) ?? 'error';
}

/** The render scope: declared payload values only, then the product's own variables. */
function scopeOf(set: TemplateSet, request: RenderRequest, formatLocale: string): Record<string, unknown> {
  const strings = pickLocale(set.layoutStrings, request.locale, set.fallbackLocale)?.value;
  const entry = set.entries.get(request.template);
  const declared = entry ? Object.keys(entry.definition.variables) : [];
  const scope: Record<string, unknown> = {};
  for (const name of declared) if (Object.hasOwn(request.payload, name)) scope[name] = request.payload[name];
  if (request.anchorAt) scope.anchor_at = request.anchorAt;
  if (request.windowClosesAt) scope.window_closes_at = request.windowClosesAt;
  scope.code = request.code;
  scope.links = { manage: request.links.manage, unsubscribe: request.links.unsubscribe ?? null };
  scope.recipient = { locale: formatLocale, time_zone: request.timeZone };
  scope.category = request.category;
  scope.cancellable = request.cancellable === true;
  scope.notice_type = request.noticeType;
  if (strings) scope.merchant = strings.merchant;
  return scope;
}

/** Renders compiled where it can (lib/templates/compiled.ts), with LiquidJS otherwise and for every error. */
function run(templates: Template[], scope: Record<string, unknown>, html: boolean, where: string): string {
  const engine = html ? htmlEngine : textEngine;
  const rendered = compiledFor(engine, templates)?.(scope);
  if (typeof rendered === 'string') return rendered;
  return withLiquid(engine, templates, scope, where);
}

function withLiquid(engine: typeof htmlEngine, templates: Template[], scope: Record<string, unknown>, where: string): string {
  try {
    return engine.renderSync(templates, scope) as string;
  } catch (error) {
    throw new RenderError(`${where}: ${reasonOf(error)}`);
  }
}

/** `run` for HTML, with the compiled render's trace when `traced`; none where LiquidJS rendered it. */
function runTraced(templates: Template[], scope: Record<string, unknown>, where: string, traced: boolean): { text: string; trace: RenderTrace | null } {
  if (!traced) return { text: run(templates, scope, true, where), trace: null };
  const compiled = compiledFor(htmlEngine, templates);
  if (compiled) {
    const parts: TracePart[] = [];
    const text = compiled(scope, parts);
    if (typeof text === 'string') return { text, trace: { pieces: compiled.pieces, parts } };
  }
  return { text: withLiquid(htmlEngine, templates, scope, where), trace: null };
}

function entryOf(set: TemplateSet, request: RenderRequest) {
  const entry = set.entries.get(request.template);
  if (!entry) throw new RenderError(`no template "${request.template.slice(0, 100)}" for notice type ${request.noticeType.slice(0, 64)}`);
  if (!request.links.manage) throw new RenderError(`${request.template}: no manage link to show (every notice carries one)`);
  return entry;
}

/**
 * The formatting locale: the recipient's own when the template speaks its language (de-AT with a
 * `de` template formats as de-AT: `1. Dezember`, `49,00 €`), else the template's — a `fr`
 * recipient who gets the `en` fallback reads "December 4", not "renews on 4 décembre".
 */
function formatLocaleOf(request: RenderRequest, templateLocale: string): string {
  const own = request.locale ? canonicalLocale(request.locale) : null;
  if (own && own.split('-')[0]?.toLowerCase() === templateLocale.split('-')[0]?.toLowerCase()) return own;
  return templateLocale;
}

export async function renderEmail(set: TemplateSet, request: RenderRequest): Promise<RenderedEmail> {
  const entry = entryOf(set, request);
  const chosen = pickLocale(entry.email, request.locale, set.fallbackLocale);
  if (!chosen) throw new RenderError(`${request.template}: no email template in ${localeCandidates(request.locale, set.fallbackLocale).join(', ')}`);
  const { locale, value: template } = chosen;
  const where = `${request.template}/email.${locale}`;
  const scope = scopeOf(set, request, formatLocaleOf(request, locale));
  const subject = run(template.subject, scope, false, `${where}.subject`).replace(/\s+/g, ' ').trim();
  if (subject === '') throw new RenderError(`${where}.subject: renders empty`);
  const traced = request.traceHtml === true;
  const { text: body, trace: bodyTrace } = runTraced(template.html, scope, `${where}.html`, traced);
  const bodyText = template.text ? run(template.text, scope, false, `${where}.text`).trim() : htmlToText(body).trim();
  const strings = pickLocale(set.layoutStrings, request.locale, set.fallbackLocale)?.value;
  if (!strings) throw new RenderError(`_layout: no strings for ${locale}`);
  const layoutScope = { ...scope, t: strings, body, subject, preview: bodyText.split('\n').find((line) => line.trim() !== '') ?? subject };
  const layout = await compileLayout(set);
  const { text: html, trace: layoutTrace } = runTraced(layout, layoutScope, '_layout/email.mjml', traced);
  const text = run(set.textLayout, { ...layoutScope, body: bodyText }, false, '_layout/text.liquid')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  // The layout emits the body (`{{ body | raw }}`) as it is: that part is the body's own trace.
  const htmlTrace =
    layoutTrace && bodyTrace && body !== ''
      ? { pieces: layoutTrace.pieces, parts: layoutTrace.parts.map((part) => (part === body ? bodyTrace : part)) }
      : layoutTrace;
  return { subject, html, text: `${text}\n`, locale, htmlTrace };
}

export function renderSms(set: TemplateSet, request: RenderRequest): RenderedSms {
  const entry = entryOf(set, request);
  const chosen = pickLocale(entry.sms, request.locale, set.fallbackLocale);
  if (!chosen) throw new RenderError(`${request.template}: no sms template in ${localeCandidates(request.locale, set.fallbackLocale).join(', ')}`);
  const { locale, value: template } = chosen;
  const text = run(template.text, scopeOf(set, request, formatLocaleOf(request, locale)), false, `${request.template}/sms.${locale}`)
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') throw new RenderError(`${request.template}/sms.${locale}: renders empty`);
  return { text, locale };
}
