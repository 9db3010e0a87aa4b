import { z } from 'zod';
import { canonicalJson, sha256Hex } from '@/lib/evidence/hash';
import { parseHtml, textEngine } from './engine';
import { layoutStringsSchema, type LayoutStrings, type TemplateEntry, type TemplateSet } from './load';
import { pickLocale } from './render';
import { templateDefinitionSchema } from './schema';

/**
 * A template version (issue 30 item 5): everything one notice's render read from the operator's
 * files — its template's channel files in the locale the render picked, the layout, the layout
 * strings it picked, and the template's definition (which payload variables reach it) — as
 * content, addressed by the SHA-256 of that content's canonical JSON. The worker computes it
 * once per set × template × channel × recipient locale (a map lookup per notice after the first)
 * and stores it once per process (lib/jobs/template-versions.ts); the console re-renders a sent
 * notice from it (lib/console/rerender.ts), never from the files deployed now.
 */

export const templateVersionContentSchema = z.strictObject({
  template: z.string(),
  channel: z.enum(['email', 'sms']),
  /** The template's locale the render picked; the only one stored, so the re-render picks it again. */
  locale: z.string(),
  /** The layout strings' locale the render picked. */
  stringsLocale: z.string(),
  fallbackLocale: z.string(),
  definition: templateDefinitionSchema,
  /** Path under the templates directory → the file's text as parsed. */
  files: z.record(z.string(), z.string()),
});
export type TemplateVersionContent = z.infer<typeof templateVersionContentSchema>;

export type TemplateVersion = { id: string; templateId: string; channel: 'email' | 'sms'; locale: string; content: TemplateVersionContent };

const versionsBySet = new WeakMap<TemplateSet, Map<string, TemplateVersion | null>>();

/** The first 12 hex characters: what the console shows beside a re-render. */
export const shortVersionId = (id: string) => id.slice(0, 12);

function contentOf(set: TemplateSet, entry: TemplateEntry, channel: 'email' | 'sms', locale: string, stringsLocale: string): TemplateVersionContent | null {
  const template = channel === 'email' ? entry.email.get(locale) : entry.sms.get(locale);
  if (!template) return null;
  const files: Record<string, string> = { ...template.sources };
  if (channel === 'email') {
    files['_layout/email.mjml'] = set.layoutMjml;
    const text = set.layoutSources.get('_layout/text.liquid');
    if (text !== undefined) files['_layout/text.liquid'] = text;
  }
  const strings = set.layoutSources.get(`_layout/strings.${stringsLocale}.json`);
  if (strings !== undefined) files[`_layout/strings.${stringsLocale}.json`] = strings;
  return { template: entry.id, channel, locale, stringsLocale, fallbackLocale: set.fallbackLocale, definition: entry.definition, files };
}

/**
 * The version a render of `template` on `channel` for a recipient in `recipientLocale` reads:
 * the same locale choices renderEmail and renderSms make (pickLocale). Null when the set has no
 * such template (the render fails anyway and nothing is sent).
 */
export function templateVersionOf(
  set: TemplateSet,
  { template, channel, recipientLocale }: { template: string; channel: 'email' | 'sms'; recipientLocale: string | null },
): TemplateVersion | null {
  let known = versionsBySet.get(set);
  if (!known) {
    known = new Map();
    versionsBySet.set(set, known);
  }
  // Keyed by the recipient's locale as the job has it: a hit costs no locale resolution at all.
  const key = `${template}\0${channel}\0${recipientLocale ?? ''}`;
  const cached = known.get(key);
  if (cached !== undefined) return cached;
  const version = resolveVersion(set, { template, channel, recipientLocale });
  known.set(key, version);
  return version;
}

/** Versions by their id within one set, so recipients whose locales resolve alike share one object. */
const byIdInSet = new WeakMap<TemplateSet, Map<string, TemplateVersion>>();

function resolveVersion(
  set: TemplateSet,
  { template, channel, recipientLocale }: { template: string; channel: 'email' | 'sms'; recipientLocale: string | null },
): TemplateVersion | null {
  const entry = set.entries.get(template);
  if (!entry) return null;
  const byLocale: ReadonlyMap<string, { locale: string }> = channel === 'email' ? entry.email : entry.sms;
  const chosen = pickLocale(byLocale, recipientLocale, set.fallbackLocale);
  const strings = pickLocale(set.layoutStrings, recipientLocale, set.fallbackLocale);
  if (!chosen || !strings) return null;
  const content = contentOf(set, entry, channel, chosen.locale, strings.locale);
  if (!content) return null;
  const id = templateVersionId(content);
  let ids = byIdInSet.get(set);
  if (!ids) {
    ids = new Map();
    byIdInSet.set(set, ids);
  }
  const existing = ids.get(id);
  if (existing) return existing;
  const version = { id, templateId: template, channel, locale: chosen.locale, content };
  ids.set(id, version);
  return version;
}

export function templateVersionId(content: TemplateVersionContent): string {
  return sha256Hex(canonicalJson(content));
}

/**
 * A template set holding only what a version stored, for renderEmail / renderSms: one template,
 * one channel, one locale, one layout strings file. Throws on content that does not parse (a
 * stored version was parsed once already, when it was sent).
 */
export function templateSetOfVersion(content: TemplateVersionContent): TemplateSet {
  const file = (path: string) => {
    const source = content.files[path];
    if (source === undefined) throw new Error(`template version has no ${path}`);
    return source;
  };
  const prefix = `${content.template}/${content.channel}.${content.locale}`;
  const entry: TemplateEntry = { id: content.template, definition: content.definition, email: new Map(), sms: new Map(), usesAnchor: false };
  if (content.channel === 'sms') {
    const path = `${prefix}.liquid`;
    entry.sms.set(content.locale, { locale: content.locale, text: textEngine.parse(file(path), path), files: [path], sources: { [path]: file(path) } });
  } else {
    const textPath = `${prefix}.text.liquid`;
    const hasText = content.files[textPath] !== undefined;
    entry.email.set(content.locale, {
      locale: content.locale,
      subject: textEngine.parse(file(`${prefix}.subject.liquid`), `${prefix}.subject.liquid`),
      html: parseHtml(file(`${prefix}.html.liquid`), `${prefix}.html.liquid`),
      text: hasText ? textEngine.parse(file(textPath), textPath) : null,
      files: [],
      sources: {},
    });
  }
  const layoutStrings = new Map<string, LayoutStrings>();
  const stringsPath = `_layout/strings.${content.stringsLocale}.json`;
  if (content.files[stringsPath] !== undefined) layoutStrings.set(content.stringsLocale, layoutStringsSchema.parse(JSON.parse(file(stringsPath))));
  const textLayout = content.files['_layout/text.liquid'];
  return {
    directory: `template version ${shortVersionId(templateVersionId(content))}`,
    fallbackLocale: content.fallbackLocale,
    entries: new Map([[content.template, entry]]),
    layoutStrings,
    textLayout: textLayout === undefined ? [] : textEngine.parse(textLayout, '_layout/text.liquid'),
    layoutSources: new Map(),
    layoutMjml: content.files['_layout/email.mjml'] ?? '',
    compiledLayout: null,
  };
}
