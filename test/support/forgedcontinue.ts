/** A continue token as a client could forge it: a real one from the server with its fields changed. */
export function forgedContinue(real: string, changes: Record<string, unknown>): string {
  const fields = JSON.parse(Buffer.from(real, 'base64url').toString('utf8')) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...fields, ...changes })).toString('base64url');
}
