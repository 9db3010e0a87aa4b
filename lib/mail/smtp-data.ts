const DOT = 0x2e;
const LF = 0x0a;
const CR = 0x0d;
const CRLF = Buffer.from('\r\n');
const DOT_ONLY = Buffer.from('.');

/**
 * A message as SMTP's DATA carries it (RFC 5321 §4.5.2), exactly as nodemailer's DataStream
 * (`nodemailer/lib/smtp-connection/data-stream.js`) writes one chunk: a `.` at the start of a line
 * doubled, a bare LF made CRLF, and the closing `.` line, after a CRLF when the message lacks one.
 * The pipelined send (./smtp-pool.ts) writes these bytes itself; smtp-data.test.ts checks them
 * against DataStream's.
 */
export function smtpData(message: Buffer): Buffer {
  const pieces: Buffer[] = [];
  let start = 0;
  let total = 0;
  const stuff = (dot: number) => {
    pieces.push(message.subarray(start, dot + 1), DOT_ONLY);
    total += dot + 2 - start;
    start = dot + 1;
  };
  if (message[0] === DOT) stuff(0);
  // Line ends found by memchr (Buffer#indexOf), not byte by byte: a notice's message is ~30 KB.
  for (let lf = message.indexOf(LF); lf !== -1; lf = message.indexOf(LF, lf + 1)) {
    if (lf === 0 || message[lf - 1] !== CR) {
      pieces.push(message.subarray(start, lf), CRLF);
      total += lf - start + 2;
      start = lf + 1;
    }
    if (message[lf + 1] === DOT) stuff(lf + 1);
  }
  const last = message.length > 0 ? message[message.length - 1] : undefined;
  const end = last === LF ? '.\r\n' : last === CR ? '\n.\r\n' : '\r\n.\r\n';
  pieces.push(message.subarray(start), Buffer.from(end, 'latin1'));
  total += message.length - start + end.length;
  return Buffer.concat(pieces, total);
}
