/**
 * The control plane's own CA and serving certificate, created on first start in
 * <data-dir>/pki (ECDSA P-256, SHA-256). The serving certificate is renewed at start when it
 * nears expiry or no longer names this machine's addresses; the CA stays, so clients that
 * pinned it keep working.
 *
 * Every file is written atomically (writeFileAtomic), so a crash or a power loss leaves each
 * one whole or absent. A serving certificate or key found damaged anyway (cut short by an
 * earlier version, or not a pair) is made again. The CA is never replaced silently: agents that
 * joined pinned it, so a damaged CA file stops the start with an error naming the file.
 */
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect polyfill first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { caHashOf } from '../../client/util/tls.js';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join, relative } from 'node:path';
import { writeFileAtomic } from '../../client/util/atomicfile.js';

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

/** Certificates are public; keys are the owner's only. */
const CERT_MODE = 0o644;

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
  const certPath = join(dir, 'server.crt');
  const keyPath = join(dir, 'server.key');

  const ca = await loadOrCreateCa(dataDir, caPath, join(dir, 'ca.key'));
  const names = localHostNames(extraNames);
  let certPem = readIfExists(certPath);
  let keyPem = readIfExists(keyPath);
  if (!isServerPair(certPem, keyPem, ca.cert) || !coversNames(certPem, names)) {
    const server = await createServerCert(new x509.X509Certificate(ca.pem), ca.key, names);
    certPem = server.certPem;
    keyPem = server.keyPem;
    // A crash between the two leaves a pair that does not match: made again at the next start.
    writeFileAtomic(keyPath, keyPem);
    writeFileAtomic(certPath, certPem, CERT_MODE);
  }
  return { caPath, caPem: ca.pem, certPem, keyPem, caHash: caHashOf(ca.pem) };
}

interface LoadedCa {
  pem: string;
  cert: X509Certificate;
  key: CryptoKey;
}

/**
 * The CA: made when ca.crt does not exist (no join token can have pinned it yet; the key is
 * written first, so a ca.key without ca.crt is a first start cut short), else read and checked.
 */
async function loadOrCreateCa(dataDir: string, caPath: string, caKeyPath: string): Promise<LoadedCa> {
  if (!existsSync(caPath)) {
    const ca = await createCa();
    writeFileAtomic(caKeyPath, ca.keyPem);
    writeFileAtomic(caPath, ca.certPem, CERT_MODE);
    return { pem: ca.certPem, cert: new X509Certificate(ca.certPem), key: ca.keys.privateKey };
  }
  const pem = readFileSync(caPath, 'utf8');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    throw damagedCa(dataDir, caPath, 'is empty or not a certificate');
  }
  const keyPem = readIfExists(caKeyPath);
  if (!keyPem) throw damagedCa(dataDir, caKeyPath, 'is missing or empty');
  try {
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) throw new Error('not the key of ca.crt');
    return { pem, cert, key: await importKey(keyPem) };
  } catch {
    throw damagedCa(dataDir, caKeyPath, 'is not a private key, or not the one of ca.crt');
  }
}

function damagedCa(dataDir: string, path: string, what: string): Error {
  return new Error(
    `the CA file ${relative(dataDir, path)} ${what} (${path}): restore pki/ca.crt and pki/ca.key from a backup. If no agent has joined this cluster yet, delete both and start again to make a new CA; agents that joined trust only the old CA and would have to join again`,
  );
}

/** A certificate and key that belong together and were issued by this CA. */
function isServerPair(certPem: string, keyPem: string, ca: X509Certificate): boolean {
  try {
    const cert = new X509Certificate(certPem);
    return (
      cert.checkPrivateKey(createPrivateKey(keyPem)) && cert.checkIssued(ca) && cert.verify(ca.publicKey)
    );
  } catch {
    return false; // Empty or cut short.
  }
}

function readIfExists(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
