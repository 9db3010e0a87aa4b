import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * A self-signed certificate and its key, made by OpenSSL in `dir` (`key.pem`, `cert.pem`): a
 * local relay, webhook receiver or SNS signer with a certificate of its own, which the process
 * under test is told to trust (NODE_EXTRA_CA_CERTS) where it must verify it.
 */
export function selfSignedCertificate(
  dir: string,
  { subject = '/CN=127.0.0.1', altName = 'IP:127.0.0.1', days = 1 }: { subject?: string; altName?: string | null; days?: number } = {},
): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      subject,
      ...(altName ? ['-addext', `subjectAltName=${altName}`] : []),
    ],
    { stdio: 'ignore' },
  );
  return { key, cert };
}
