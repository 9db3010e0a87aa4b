import { createHash, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * A local RFC 3161 time-stamping authority for tests (never production), on pkijs + asn1js: a
 * self-signed ECDSA P-256 certificate with the critical timeStamping extended key usage, and an
 * HTTP endpoint that answers a TimeStampReq (application/timestamp-query) with a granted
 * TimeStampResp whose token carries the ESS signingCertificateV2 attribute `openssl ts -verify`
 * requires. `certificatePem` is what a verifier trusts (`-CAfile`).
 */

export type LocalTsa = { url: string; certificatePem: string; issued: () => number; stop: () => Promise<void> };

const crypto = webcrypto as unknown as Crypto;
const engine = new pkijs.CryptoEngine({ name: 'node', crypto });
const SHA256 = '2.16.840.1.101.3.4.2.1';
const ab = (buffer: Buffer): ArrayBuffer => buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;

async function selfSignedTsaCertificate(): Promise<{ certificate: pkijs.Certificate; privateKey: CryptoKey }> {
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const certificate = new pkijs.Certificate();
  certificate.version = 2;
  certificate.serialNumber = new asn1js.Integer({ value: Date.now() % 1_000_000_000 });
  const name = [new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: 'notice-ledger test TSA' }) })];
  certificate.issuer.typesAndValues = name;
  certificate.subject.typesAndValues = name;
  certificate.notBefore.value = new Date(Date.now() - 3_600_000);
  certificate.notAfter.value = new Date(Date.now() + 24 * 3_600_000);
  certificate.extensions = [
    new pkijs.Extension({ extnID: '2.5.29.19', critical: true, extnValue: new pkijs.BasicConstraints({ cA: false }).toSchema().toBER(false) }),
    new pkijs.Extension({
      extnID: '2.5.29.37',
      critical: true,
      extnValue: new pkijs.ExtKeyUsage({ keyPurposes: ['1.3.6.1.5.5.7.3.8'] }).toSchema().toBER(false),
    }),
  ];
  await certificate.subjectPublicKeyInfo.importKey(keys.publicKey, engine);
  await certificate.sign(keys.privateKey, 'SHA-256', engine);
  return { certificate, privateKey: keys.privateKey };
}

async function tokenFor(request: pkijs.TimeStampReq, certificate: pkijs.Certificate, privateKey: CryptoKey, serial: number): Promise<pkijs.ContentInfo> {
  const tst = new pkijs.TSTInfo({
    version: 1,
    policy: '1.3.6.1.4.1.55555.1.1',
    messageImprint: request.messageImprint,
    serialNumber: new asn1js.Integer({ value: serial }),
    genTime: new Date(),
    ordering: false,
    ...(request.nonce ? { nonce: request.nonce } : {}),
  });
  const tstDer = Buffer.from(tst.toSchema().toBER(false));
  const certDer = Buffer.from(certificate.toSchema().toBER(false));
  const essCertIdV2 = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({
        value: [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: ab(createHash('sha256').update(certDer).digest()) })] })],
      }),
    ],
  });
  const signed = new pkijs.SignedData({
    version: 3,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType: '1.2.840.113549.1.9.16.1.4',
      eContent: new asn1js.OctetString({ valueHex: ab(tstDer) }),
    }),
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({
          type: 0,
          attributes: [
            new pkijs.Attribute({ type: '1.2.840.113549.1.9.3', values: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.9.16.1.4' })] }),
            new pkijs.Attribute({
              type: '1.2.840.113549.1.9.4',
              values: [new asn1js.OctetString({ valueHex: ab(createHash('sha256').update(tstDer).digest()) })],
            }),
            new pkijs.Attribute({ type: '1.2.840.113549.1.9.16.2.47', values: [essCertIdV2] }),
          ],
        }),
      }),
    ],
    certificates: request.certReq ? [certificate] : [],
  });
  await signed.sign(privateKey, 0, 'SHA-256', undefined, engine);
  return new pkijs.ContentInfo({ contentType: pkijs.ContentInfo.SIGNED_DATA, content: signed.toSchema(true) });
}

export async function startLocalTsa(): Promise<LocalTsa> {
  const { certificate, privateKey } = await selfSignedTsaCertificate();
  let serial = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        try {
          if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') throw new Error('not a time-stamp query');
          const request = pkijs.TimeStampReq.fromBER(ab(Buffer.concat(chunks)));
          if (request.messageImprint.hashAlgorithm.algorithmId !== SHA256) throw new Error('only SHA-256');
          serial += 1;
          const token = await tokenFor(request, certificate, privateKey, serial);
          const response = new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }), timeStampToken: token });
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from(response.toSchema().toBER(false)));
        } catch {
          res.writeHead(400).end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const der = Buffer.from(certificate.toSchema().toBER(false)).toString('base64');
  return {
    url: `http://127.0.0.1:${String(port)}/tsa`,
    certificatePem: `-----BEGIN CERTIFICATE-----\n${der.replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END CERTIFICATE-----\n`,
    issued: () => serial,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
