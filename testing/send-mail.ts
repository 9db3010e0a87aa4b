import { createMailTransport } from '@/lib/mail/transport';

/**
 * Sends two notices through the SMTP transport to SMTP_URL and prints their outcomes as one JSON
 * line: the production transport in a process of its own, for what must be set before Node starts
 * (NODE_EXTRA_CA_CERTS: a relay's certificate the test made; lib/mail/transport-tls.test.ts).
 */
const transport = createMailTransport({
  smtpUrl: process.env.SMTP_URL ?? '',
  timeoutMs: 5_000,
  from: 'from@example.org',
  messageIdDomain: 'example.org',
  maxConnections: 1,
});
const outcomes = [];
for (const n of [1, 2]) {
  outcomes.push(
    await transport.send({
      noticeKey: String(n).repeat(64),
      to: `r${String(n)}@example.org`,
      subject: `over tls ${String(n)}`,
      text: 'text',
      html: '<p>html</p>',
    }),
  );
}
transport.close();
console.log(JSON.stringify(outcomes));
