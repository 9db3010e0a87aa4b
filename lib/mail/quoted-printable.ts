/**
 * Quoted-printable (RFC 2045 §6.7) exactly as nodemailer writes it — `qp.wrap(qp.encode(text), 76)`,
 * what its MIME builder streams a text or HTML part through — in a fraction of its time. nodemailer
 * appends to a string byte by byte and soft-wraps with four regular expressions per line; on the
 * ~10 KB HTML of a notice that was ~200 µs, a fifth of the SMTP worker's busy time (issue 27).
 * Here the bytes go into one buffer and each line's break is found by looking at characters.
 *
 * Byte-identical with nodemailer's output is the contract, kept by a property test against its own
 * functions (quoted-printable.test.ts): the same soft breaks in the same places, so the message
 * the SMTP transport builds is the one nodemailer would have built (lib/mail/compose.test.ts).
 */

const HEX = Buffer.from('0123456789ABCDEF', 'latin1');
const LINE_LENGTH = 76;
const LINE_MARGIN = Math.floor(LINE_LENGTH / 3);

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const EQUALS = 0x3d;

// Per byte: 1 printable as itself (TAB, LF, CR, `!`…`~` without `=`), 2 a space or tab (itself
// unless a line end or the text's end follows), 0 escaped as `=XX`.
const LITERAL = 1;
const BLANK = 2;
const CLASS = new Uint8Array(256);
for (let byte = 0x21; byte <= 0x7e; byte += 1) CLASS[byte] = LITERAL;
CLASS[EQUALS] = 0;
CLASS[LF] = LITERAL;
CLASS[CR] = LITERAL;
CLASS[SPACE] = BLANK;
CLASS[TAB] = BLANK;

/** nodemailer's `qp.encode`: UTF-8 bytes, `=XX` for the rest and for a space or tab before a line end. */
export function encodeQuotedPrintableBytes(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const length = bytes.length;
  const out = Buffer.allocUnsafe(length * 3);
  let o = 0;
  for (let i = 0; i < length; i += 1) {
    const byte = bytes[i] as number;
    const kind = CLASS[byte];
    if (kind === LITERAL) {
      out[o++] = byte;
      continue;
    }
    if (kind === BLANK && i + 1 < length) {
      const next = bytes[i + 1];
      if (next !== LF && next !== CR) {
        out[o++] = byte;
        continue;
      }
    }
    out[o++] = EQUALS;
    out[o++] = HEX[byte >> 4] as number;
    out[o++] = HEX[byte & 0x0f] as number;
  }
  return out.toString('latin1', 0, o);
}

const isHex = (code: number) => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
const isSeparator = (code: number) => code === SPACE || code === TAB || code === 0x2e || code === 0x2c || code === 0x21 || code === 0x3f;

/** `line` ends with `=XX` (X a hex digit). */
function endsWithEscape(line: string): boolean {
  const n = line.length;
  return n >= 3 && line.charCodeAt(n - 3) === EQUALS && isHex(line.charCodeAt(n - 2)) && isHex(line.charCodeAt(n - 1));
}

/** How many of `line`'s last characters are an unfinished escape: `=` or `=X` (0 when none). */
function unfinishedEscape(line: string): number {
  const n = line.length;
  if (n >= 1 && line.charCodeAt(n - 1) === EQUALS) return 1;
  if (n >= 2 && line.charCodeAt(n - 2) === EQUALS && isHex(line.charCodeAt(n - 1))) return 2;
  return 0;
}

/** `line` is one to four escapes and nothing else (`^(?:=[\da-f]{2}){1,4}$`). */
function isOnlyEscapes(line: string): boolean {
  const n = line.length;
  if (n === 0 || n > 12 || n % 3 !== 0) return false;
  for (let i = 0; i < n; i += 3) if (line.charCodeAt(i) !== EQUALS || !isHex(line.charCodeAt(i + 1)) || !isHex(line.charCodeAt(i + 2))) return false;
  return true;
}

/** nodemailer's `qp.wrap(text, 76)`: soft line breaks (`=\r\n`) where its rules put them. */
export function wrapQuotedPrintable(text: string): string {
  const length = text.length;
  if (length <= LINE_LENGTH) return text;
  let pos = 0;
  let result = '';
  while (pos < length) {
    let line = text.substr(pos, LINE_LENGTH);
    const crlf = line.indexOf('\r\n');
    if (crlf !== -1) {
      line = line.slice(0, crlf + 2);
      result += line;
      pos += line.length;
      continue;
    }
    if (line.charCodeAt(line.length - 1) === LF) {
      result += line;
      pos += line.length;
      continue;
    }
    const tailStart = Math.max(0, line.length - LINE_MARGIN);
    // A line break in the tail with no CR after it: cut right after it.
    const newline = line.lastIndexOf('\n');
    if (newline >= tailStart && line.indexOf('\r', newline) === -1) {
      line = line.slice(0, newline + 1);
      result += line;
      pos += line.length;
      continue;
    }
    let separator = -1;
    if (line.length > LINE_LENGTH - LINE_MARGIN) {
      for (let i = line.length - 1; i >= tailStart; i -= 1) {
        if (isSeparator(line.charCodeAt(i))) {
          separator = i;
          break;
        }
      }
    }
    if (separator !== -1) {
      // Cut after the last space or punctuation of the tail.
      line = line.slice(0, separator + 1);
    } else if (unfinishedEscape(line) > 0 || endsWithEscape(line)) {
      // Push an unfinished escape to the next line, and never split a UTF-8 sequence.
      line = line.slice(0, line.length - unfinishedEscape(line));
      while (line.length > 3 && line.length < length - pos && !isOnlyEscapes(line) && endsWithEscape(line)) {
        const code = parseInt(line.slice(-2), 16);
        if (code < 0x80) break;
        line = line.slice(0, line.length - 3);
        if (code >= 0xc0) break;
      }
    }
    if (pos + line.length < length && line.charCodeAt(line.length - 1) !== LF) {
      if (line.length === LINE_LENGTH && endsWithEscape(line)) line = line.slice(0, line.length - 3);
      else if (line.length === LINE_LENGTH) line = line.slice(0, line.length - 1);
      pos += line.length;
      line += '=\r\n';
    } else {
      pos += line.length;
    }
    result += line;
  }
  return result;
}

/** A part's body as nodemailer's quoted-printable encoder streams it. */
export function encodeQuotedPrintable(text: string): string {
  return wrapQuotedPrintable(encodeQuotedPrintableBytes(text));
}
