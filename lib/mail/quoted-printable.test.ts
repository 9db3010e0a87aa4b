import fc from 'fast-check';
import qp from 'nodemailer/lib/qp';
import { describe, expect, it } from 'vitest';
import { encodeQuotedPrintable, encodeQuotedPrintableBytes, wrapQuotedPrintable } from './quoted-printable';

/** What nodemailer's MIME builder streams a part's text through: its own encoder, then its own soft wrap. */
const nodemailerQp = (text: string) => qp.wrap(qp.encode(text), 76);

// Characters that steer the encoder and the wrap: line ends, spaces and tabs before them, the
// punctuation the wrap breaks after, `=` (always escaped), multi-byte UTF-8, and plain letters.
const steering = fc.constantFrom('\r\n', '\n', '\r', ' ', '\t', '.', ',', '!', '?', '=', 'é', '€', '😀', 'ü', '\u0000', '\u007f', 'a', 'Z', '0', '<', '>');
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '€', '=', '-', '/'), minLength: 0, maxLength: 90 });
const texts = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 400 }),
  fc.array(fc.oneof(steering, word), { maxLength: 120 }).map((parts) => parts.join('')),
  fc.array(fc.oneof(fc.constant(' '), fc.constant('\r\n'), word), { maxLength: 60 }).map((parts) => parts.join('')),
  // Bare CR and LF near a line's end: the wrap cuts after an LF only when no CR follows it.
  fc.array(fc.constantFrom('\n', '\r', 'ab', 'abcdefghij', ' ', '€'), { maxLength: 80 }).map((parts) => parts.join('')),
);

describe('quoted-printable', () => {
  it('encodes and wraps byte for byte as nodemailer does, whatever the text', () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(encodeQuotedPrintableBytes(text)).toBe(qp.encode(text));
        expect(encodeQuotedPrintable(text)).toBe(nodemailerQp(text));
      }),
      { numRuns: 3_000 },
    );
  });

  it('wraps any encoded text where nodemailer does, runs of escapes and long words included', () => {
    const encoded = fc.array(fc.oneof(fc.constantFrom('=C3=A9', '=E2=82=AC', '=F0=9F=98=80', '=3D', '=20', '=0D=0A', '\r\n', '\n', ' ', '.'), word), {
      maxLength: 80,
    });
    fc.assert(
      fc.property(encoded, (parts) => {
        const text = qp.encode(parts.join(''));
        expect(wrapQuotedPrintable(text)).toBe(qp.wrap(text, 76));
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps every line within 76 characters and decodes back to the text', () => {
    const text = `<p style="font-family: -apple-system, 'Segoe UI'">Ihr Abo „Kaffee-Box“ verlängert sich am 1. Oktober für 49,00 € —${'x'.repeat(200)}</p>\n\tEnde. `;
    const encoded = encodeQuotedPrintable(text);
    for (const line of encoded.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
    const decoded = Buffer.from(
      encoded.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
    expect(decoded).toBe(text);
  });
});
