import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Template } from 'liquidjs';
import { z } from 'zod';
import type { NoticeConfig } from '@/lib/windows/load-config';
import { definitionFor, type TemplatesConfig } from './config';
import { htmlEngine, parseHtml, textEngine } from './engine';
import { canonicalLocale } from '@/lib/api/fields';
import { compileMjmlInProcess, MjmlError, type MjmlCompiler } from './mjml';
import { builtInVariables, type TemplateDefinition } from './schema';

/**
 * The template files of a configuration, read and parsed once (`templatesOf`): every file is
 * parsed at load, and a file that does not parse or names a variable its template does not
 * declare stops start-up with the file and the variable. The layout (MJML, compiled once to HTML
 * with its Liquid left in place) is compiled by `prepareTemplates`, which the worker and the
 * console await at start.
 *
 *   <directory>/<template>/email.<locale>.subject.liquid   the subject (text)
 *   <directory>/<template>/email.<locale>.html.liquid      the body, HTML inside the layout
 *   <directory>/<template>/email.<locale>.text.liquid      optional; else the body as text (html-to-text)
 *   <directory>/<template>/sms.<locale>.liquid             an SMS (text)
 *   <directory>/_layout/email.mjml, text.liquid, strings.<locale>.json
 */

export type Channel = 'email' | 'sms';

/** `sources`: each file's text as it was parsed, by its path under the directory (what a template version stores, lib/templates/versions.ts). */
export type EmailTemplate = {
  locale: string;
  subject: Template[];
  html: Template[];
  text: Template[] | null;
  files: string[];
  sources: Record<string, string>;
};
export type SmsTemplate = { locale: string; text: Template[]; files: string[]; sources: Record<string, string> };

export type TemplateEntry = {
  id: string;
  definition: TemplateDefinition;
  email: Map<string, EmailTemplate>;
  sms: Map<string, SmsTemplate>;
  /** Whether any of its files shows the notice's anchor (then a reminder without anchorAt is refused). */
  usesAnchor: boolean;
};

export const layoutStringsSchema = z.strictObject({
  /** The sender's name: the header, and `{{ merchant }}` in every template (a pre-debit notice must name it). */
  merchant: z.string().min(1).max(100),
  /** The action button: the recipient page, for a type it can be cancelled from. */
  action: z.string().min(1).max(100),
  /** The action button for a type with nothing to cancel (a payment recovery): the page shows the details and preferences. */
  review: z.string().min(1).max(100),
  /** Before the one-time confirmation code. */
  code: z.string().min(1).max(200),
  /** A courtesy notice's footer, before the unsubscribe link. */
  unsubscribe_intro: z.string().min(1).max(300),
  unsubscribe: z.string().min(1).max(100),
  /** A required notice's footer: why there is no unsubscribe. */
  required: z.string().min(1).max(400),
  /** Shown beside the manage link in the text part (`review` stands in for a type with nothing to cancel). */
  manage: z.string().min(1).max(100),
});
export type LayoutStrings = z.infer<typeof layoutStringsSchema>;

export type TemplateSet = {
  directory: string;
  fallbackLocale: string;
  entries: Map<string, TemplateEntry>;
  layoutStrings: Map<string, LayoutStrings>;
  textLayout: Template[];
  /** The layout's sources as parsed, by path (`_layout/text.liquid`, `_layout/strings.<locale>.json`), for template versions. */
  layoutSources: Map<string, string>;
  /** The layout's MJML source; compiled by prepareTemplates. */
  layoutMjml: string;
  compiledLayout: Template[] | null;
};

export class TemplateConfigError extends Error {
  constructor(
    readonly directory: string,
    readonly problems: string[],
  ) {
    super(`Invalid templates in ${directory}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'TemplateConfigError';
  }
}

const fileName = /^(email|sms)\.([A-Za-z0-9-]{2,35})(?:\.(subject|html|text))?\.liquid$/;
const layoutVariables = new Set<string>([...builtInVariables, 't', 'body', 'subject', 'preview']);

function readText(file: string, problems: string[], directory: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`${relative(directory, file)}: cannot be read: ${(error as Error).message}`);
    return null;
  }
}

function firstLine(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'error';
  // Liquid appends `, file:<path>`: the problem already names the file, relative to the directory.
  return line.replace(/, file:[^,]*/, '').slice(0, 300);
}

/** Parses one file with the engine and checks that every variable it reads is declared (or built in). */
function parseFile(
  file: string,
  { html, allowed, directory, problems, templateId }: { html: boolean; allowed: Set<string>; directory: string; problems: string[]; templateId: string },
): { templates: Template[]; variables: string[]; source: string } | null {
  const source = readText(file, problems, directory);
  if (source === null) return null;
  const engine = html ? htmlEngine : textEngine;
  let templates: Template[];
  const name = relative(directory, file);
  let variables: string[];
  try {
    templates = html ? parseHtml(source, name) : textEngine.parse(source, name);
    // Static analysis follows include/render tags: with no file system (engine.ts) they fail here.
    variables = engine.globalVariablesSync(templates);
  } catch (error) {
    problems.push(`${name}: does not parse: ${firstLine(error)}`);
    return null;
  }
  for (const name of variables) {
    if (!allowed.has(name))
      problems.push(
        `${relative(directory, file)}: variable "${name}" is not declared in templates.definitions.${templateId}.variables (declared: ${[...allowed].filter((v) => !(builtInVariables as readonly string[]).includes(v)).join(', ') || 'none'})`,
      );
  }
  return { templates, variables, source };
}

function loadEntry(directory: string, id: string, definition: TemplateDefinition, problems: string[]): TemplateEntry {
  const folder = join(directory, id);
  const entry: TemplateEntry = { id, definition, email: new Map(), sms: new Map(), usesAnchor: false };
  if (!existsSync(folder)) {
    problems.push(`${id}/: no template folder for template "${id}"`);
    return entry;
  }
  const allowed = new Set<string>([...builtInVariables, ...Object.keys(definition.variables)]);
  const parts = new Map<string, Partial<Record<'subject' | 'html' | 'text', string>>>();
  for (const name of readdirSync(folder).sort()) {
    const match = fileName.exec(name);
    const locale = match ? canonicalLocale(match[2] ?? '') : null;
    if (!match || locale === null || locale !== match[2] || (match[1] === 'email') !== (match[3] !== undefined)) {
      problems.push(
        `${id}/${name}: not a template file name (email.<locale>.subject|html|text.liquid or sms.<locale>.liquid, locale in BCP 47 canonical form)`,
      );
      continue;
    }
    if (match[1] === 'sms') {
      const parsed = parseFile(join(folder, name), { html: false, allowed, directory, problems, templateId: id });
      if (parsed) {
        entry.sms.set(locale, { locale, text: parsed.templates, files: [`${id}/${name}`], sources: { [`${id}/${name}`]: parsed.source } });
        entry.usesAnchor ||= parsed.variables.includes('anchor_at');
      }
      continue;
    }
    const part = match[3] as 'subject' | 'html' | 'text';
    parts.set(locale, { ...parts.get(locale), [part]: name });
  }
  for (const [locale, files] of parts) {
    if (!files.subject || !files.html) {
      problems.push(`${id}/email.${locale}: needs both email.${locale}.subject.liquid and email.${locale}.html.liquid`);
      continue;
    }
    const subject = parseFile(join(folder, files.subject), { html: false, allowed, directory, problems, templateId: id });
    const html = parseFile(join(folder, files.html), { html: true, allowed, directory, problems, templateId: id });
    const text = files.text ? parseFile(join(folder, files.text), { html: false, allowed, directory, problems, templateId: id }) : null;
    if (!subject || !html || (files.text && !text)) continue;
    entry.usesAnchor ||= [subject, html, text].some((parsed) => parsed?.variables.includes('anchor_at'));
    entry.email.set(locale, {
      locale,
      subject: subject.templates,
      html: html.templates,
      text: text?.templates ?? null,
      files: [files.subject, files.html, files.text].filter((file): file is string => file !== undefined).map((file) => `${id}/${file}`),
      sources: Object.fromEntries(
        [
          [files.subject, subject.source],
          [files.html, html.source],
          [files.text, text?.source],
        ].flatMap(([file, source]) => (file && source !== undefined ? [[`${id}/${file}`, source]] : [])),
      ),
    });
  }
  return entry;
}

function loadLayout(directory: string, fallbackLocale: string, problems: string[]) {
  const folder = join(directory, '_layout');
  const layoutMjml = readText(join(folder, 'email.mjml'), problems, directory) ?? '';
  const allowed = layoutVariables;
  const text = parseFile(join(folder, 'text.liquid'), { html: false, allowed, directory, problems, templateId: '_layout' });
  const layoutStrings = new Map<string, LayoutStrings>();
  const layoutSources = new Map<string, string>();
  if (text) layoutSources.set('_layout/text.liquid', text.source);
  const names = existsSync(folder) ? readdirSync(folder) : [];
  for (const name of names.sort()) {
    const match = /^strings\.([A-Za-z0-9-]{2,35})\.json$/.exec(name);
    if (!match) continue;
    const source = readText(join(folder, name), problems, directory);
    if (source === null) continue;
    let json: unknown;
    try {
      json = JSON.parse(source);
    } catch (error) {
      problems.push(`_layout/${name}: is not JSON: ${firstLine(error)}`);
      continue;
    }
    const parsed = layoutStringsSchema.safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push(`_layout/${name}: ${issue.path.join('.') || '(file)'}: ${issue.message}`);
      continue;
    }
    layoutStrings.set(match[1] ?? '', parsed.data);
    layoutSources.set(`_layout/${name}`, source);
  }
  if (!layoutStrings.has(fallbackLocale)) problems.push(`_layout/strings.${fallbackLocale}.json: the fallback locale needs the layout's strings`);
  return { layoutMjml, textLayout: text?.templates ?? [], layoutStrings, layoutSources };
}

/** Reads and checks every template file a configuration references; throws TemplateConfigError listing every problem. */
export function loadTemplates(config: NoticeConfig): TemplateSet {
  const section: TemplatesConfig | null = config.templates;
  if (!section) throw new TemplateConfigError(config.file, ['the notice configuration has no templates section']);
  const { directory, fallbackLocale } = section;
  const problems: string[] = [];
  const entries = new Map<string, TemplateEntry>();
  for (const [id, definition] of Object.entries(section.definitions)) entries.set(id, loadEntry(directory, id, definition, problems));
  for (const type of Object.values(config.noticeTypes)) {
    const entry = entries.get(type.template);
    if (!entry) continue;
    // Every channel the type may go by: its own, its fallback, and email when a refused SMS falls back to it.
    const sends = new Set([...type.channels, ...(type.channels.includes('sms') && type.emailWhenSmsRefused ? (['email'] as const) : [])]);
    for (const channel of sends) {
      const byLocale = channel === 'email' ? entry.email : entry.sms;
      if (!byLocale.has(fallbackLocale))
        problems.push(
          `${type.template}/${channel}.${fallbackLocale}: notice type ${type.name} sends ${channel}, so its template needs the fallback locale ${fallbackLocale}`,
        );
    }
  }
  for (const entry of entries.values()) {
    if (entry.sms.size > 0 && !entry.sms.has(fallbackLocale))
      problems.push(`${entry.id}/sms.${fallbackLocale}.liquid: an SMS template needs the fallback locale too`);
    if (entry.email.size > 0 && !entry.email.has(fallbackLocale))
      problems.push(`${entry.id}/email.${fallbackLocale}: an email template needs the fallback locale too`);
  }
  const layout = loadLayout(directory, fallbackLocale, problems);
  if (problems.length > 0) throw new TemplateConfigError(directory, problems);
  return { directory, fallbackLocale, entries, ...layout, compiledLayout: null };
}

const sets = new WeakMap<NoticeConfig, TemplateSet>();

/** The configuration's templates, loaded on first use and kept (a changed file takes effect on restart). */
export function templatesOf(config: NoticeConfig): TemplateSet {
  const known = sets.get(config);
  if (known) return known;
  const set = loadTemplates(config);
  sets.set(config, set);
  return set;
}

/**
 * The compiled layouts by the SHA-256 of their MJML source: a layout is compiled and parsed once
 * per process however many times a configuration is loaded (the tests load dozens), and an
 * edited file (another digest) is compiled anew. A failed compile is not kept.
 */
const compiledLayouts = new Map<string, Promise<Template[]>>();

async function compileLayoutSource(directory: string, source: string, compile: MjmlCompiler): Promise<Template[]> {
  let html: string;
  try {
    html = await compile(source);
  } catch (error) {
    if (error instanceof MjmlError) throw new TemplateConfigError(directory, [`_layout/email.mjml: is not valid MJML: ${firstLine(error)}`]);
    throw error;
  }
  let parsed: Template[];
  try {
    parsed = parseHtml(html, '_layout/email.mjml');
  } catch (error) {
    throw new TemplateConfigError(directory, [`_layout/email.mjml: its Liquid does not parse: ${firstLine(error)}`]);
  }
  for (const name of htmlEngine.globalVariablesSync(parsed)) {
    if (!layoutVariables.has(name))
      throw new TemplateConfigError(directory, [`_layout/email.mjml: variable "${name}" is not one the layout gets (${[...layoutVariables].join(', ')})`]);
  }
  return parsed;
}

/** Compiles the MJML layout once (to HTML with its Liquid left in place) and parses the result. */
export async function compileLayout(set: TemplateSet, compile: MjmlCompiler = compileMjmlInProcess): Promise<Template[]> {
  if (set.compiledLayout) return set.compiledLayout;
  const digest = createHash('sha256').update(set.layoutMjml, 'utf8').digest('hex');
  let compiled = compiledLayouts.get(digest);
  if (!compiled) {
    compiled = compileLayoutSource(set.directory, set.layoutMjml, compile);
    compiledLayouts.set(digest, compiled);
    compiled.catch(() => compiledLayouts.delete(digest));
  }
  const parsed = await compiled;
  set.compiledLayout = parsed;
  return parsed;
}

/**
 * Loads, checks and compiles everything: the worker and the console await this at start-up. The
 * worker passes `compileMjmlInChild` so that mjml is never loaded into it (lib/templates/mjml.ts).
 */
export async function prepareTemplates(config: NoticeConfig, { compileMjml }: { compileMjml?: MjmlCompiler } = {}): Promise<TemplateSet> {
  const set = templatesOf(config);
  await compileLayout(set, compileMjml);
  return set;
}

export { definitionFor };
