/** Sizes and decoding of the base64 values ConfigMaps (binaryData) and Secrets (data) hold. */

/** How many bytes a base64 value decodes to, without decoding it (padding optional). */
export function base64Bytes(value: string): number {
  const digits = value.replace(/[\s=]/g, '').length;
  return Math.floor((digits * 3) / 4);
}

/** How many bytes a text takes as UTF-8. */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** "1 byte", "16 bytes": as `kubectl describe secret` shows a value's size. */
export function bytesText(bytes: number): string {
  return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
}

/** A base64 value as text when it is UTF-8, or undefined when it is binary (or not base64). */
export function base64Text(value: string): string | undefined {
  let binary: string;
  try {
    binary = atob(value.replace(/\s/g, ''));
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
