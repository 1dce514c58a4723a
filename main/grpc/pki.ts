/**
 * The control plane's own CA and serving certificate, created on first start in
 * <data-dir>/pki (ECDSA P-256, SHA-256). The serving certificate is renewed at start when it
 * nears expiry or no longer names this machine's addresses; the CA stays, so clients that
 * pinned it keep working.
 */
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { caHashOf } from '../../client/util/tls.js';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;
const CA_DAYS = 3650;
const SERVER_DAYS = 825;
const RENEW_BEFORE_DAYS = 30;

export interface Pki {
  caPath: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  /** SHA-256 of the CA certificate (DER), hex: what a join token pins. */
  caHash: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64.trimEnd()}\n-----END ${label}-----\n`;
}

function writePrivate(path: string, data: string): void {
  writeFileSync(path, data, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** The names a client may use to reach this machine. */
export function localHostNames(extra: string[] = []): { dns: string[]; ips: string[] } {
  const dns = new Set(['localhost', hostname()]);
  const ips = new Set(['127.0.0.1', '::1']);
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.address.startsWith('fe80')) ips.add(a.address);
  }
  for (const h of extra) {
    if (/^[\d.]+$/.test(h) || h.includes(':')) ips.add(h);
    else if (h) dns.add(h);
  }
  return { dns: [...dns], ips: [...ips] };
}

async function createCa(): Promise<{
  certPem: string;
  keyPem: string;
  keys: CryptoKeyPair;
  cert: x509.X509Certificate;
}> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex'),
    name: `CN=kubelab-ca@${Math.floor(now / 1000)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + CA_DAYS * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: cert.toString('pem'), keyPem, keys, cert };
}

async function importKey(keyPem: string): Promise<CryptoKey> {
  const der = Buffer.from(keyPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']) as Promise<CryptoKey>;
}

async function createServerCert(
  ca: x509.X509Certificate,
  caKey: CryptoKey,
  names: { dns: string[]; ips: string[] },
): Promise<{ certPem: string; keyPem: string }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex'),
    subject: 'CN=kubelab-apiserver',
    issuer: ca.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + SERVER_DAYS * DAY),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...names.dns.map((value) => ({ type: 'dns' as const, value })),
        ...names.ips.map((value) => ({ type: 'ip' as const, value })),
      ]),
    ],
  });
  return {
    certPem: cert.toString('pem'),
    keyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

function coversNames(certPem: string, names: { dns: string[]; ips: string[] }): boolean {
  const cert = new x509.X509Certificate(certPem);
  if (cert.notAfter.getTime() - Date.now() < RENEW_BEFORE_DAYS * DAY) return false;
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (!san) return false;
  const have = new Set(san.names.toJSON().map((n) => `${n.type}:${n.value}`));
  return names.dns.every((d) => have.has(`dns:${d}`)) && names.ips.every((ip) => have.has(`ip:${ip}`));
}

/** Loads the PKI from <dataDir>/pki, creating or renewing what is missing. */
export async function ensurePki(dataDir: string, extraNames: string[] = []): Promise<Pki> {
  const dir = join(dataDir, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caPath = join(dir, 'ca.crt');
  const caKeyPath = join(dir, 'ca.key');
  const certPath = join(dir, 'server.crt');
  const keyPath = join(dir, 'server.key');

  let caPem: string;
  let caKey: CryptoKey;
  if (existsSync(caPath) && existsSync(caKeyPath)) {
    caPem = readFileSync(caPath, 'utf8');
    caKey = await importKey(readFileSync(caKeyPath, 'utf8'));
  } else {
    const ca = await createCa();
    writeFileSync(caPath, ca.certPem);
    writePrivate(caKeyPath, ca.keyPem);
    caPem = ca.certPem;
    caKey = ca.keys.privateKey;
  }

  const names = localHostNames(extraNames);
  let certPem = existsSync(certPath) ? readFileSync(certPath, 'utf8') : '';
  let keyPem = existsSync(keyPath) ? readFileSync(keyPath, 'utf8') : '';
  if (!certPem || !keyPem || !coversNames(certPem, names)) {
    const server = await createServerCert(new x509.X509Certificate(caPem), caKey, names);
    certPem = server.certPem;
    keyPem = server.keyPem;
    writeFileSync(certPath, certPem);
    writePrivate(keyPath, keyPem);
  }
  return { caPath, caPem, certPem, keyPem, caHash: caHashOf(caPem) };
}
