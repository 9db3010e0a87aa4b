import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '@/testing/run-script';
import { selfSignedCertificate } from '@/testing/self-signed';

/**
 * A relay on port 587 upgrades with STARTTLS, and nodemailer then speaks on a new socket: the
 * pipelined envelope and the body (lib/mail/smtp-pool.ts) must go on that one. The relay's
 * certificate is made here and trusted through NODE_EXTRA_CA_CERTS, which Node reads at start, so
 * the transport runs in a process of its own (testing/send-mail.ts).
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'smtp-tls-'));
const { key, cert } = selfSignedCertificate(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([true, false])('SMTP over STARTTLS, the relay advertising PIPELINING %s', (pipelining) => {
  it('sends the envelope and the body on the upgraded connection, and the relay takes each message', async () => {
    const envelopes: Array<{ secure: boolean; from: string }> = [];
    const messages: string[] = [];
    const server = new SMTPServer({
      key: readFileSync(key),
      cert: readFileSync(cert),
      logger: false,
      authOptional: true,
      disabledCommands: ['AUTH'],
      hidePIPELINING: !pipelining,
      onMailFrom(address, session, callback) {
        envelopes.push({ secure: session.secure, from: address.address });
        callback();
      },
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          messages.push(Buffer.concat(chunks).toString('utf8'));
          callback(null, `Ok: queued as TLS${String(messages.length)}`);
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.server.address() as AddressInfo;
      const run = await runScript({
        script: 'testing/send-mail.ts',
        args: [],
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', NODE_EXTRA_CA_CERTS: cert, SMTP_URL: `smtp://127.0.0.1:${String(port)}` },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? '[]')).toEqual([
        { kind: 'accepted', providerMessageId: 'TLS1' },
        { kind: 'accepted', providerMessageId: 'TLS2' },
      ]);
      expect(envelopes).toEqual([
        { secure: true, from: 'from@example.org' },
        { secure: true, from: 'from@example.org' },
      ]);
      expect(messages.map((m) => /^Subject: (.*)$/m.exec(m)?.[1])).toEqual(['over tls 1', 'over tls 2']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
