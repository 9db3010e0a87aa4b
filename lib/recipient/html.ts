/**
 * HTML from a template literal with every interpolated value escaped, unless it is itself
 * `Html` (a fragment built the same way). The recipient page is plain server-rendered HTML: no
 * script, forms that post, so it works without JavaScript and nothing dynamic can inject markup.
 */
export type Html = { readonly html: string };

type Value = string | number | Html | readonly Html[] | null | undefined | false;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char);
}

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map((item: Html) => item.html).join('');
  return (value as Html).html;
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return { html: out };
}
