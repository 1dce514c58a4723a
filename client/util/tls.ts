/** Certificate helpers shared by the control plane and the agent. */
import { createHash, X509Certificate } from 'node:crypto';

/** SHA-256 of a certificate's DER encoding, hex: what a join token pins. */
export function caHashOf(caPem: string): string {
  return createHash('sha256').update(new X509Certificate(caPem).raw).digest('hex');
}
