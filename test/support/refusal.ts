/** What the parse-limit tests share: limits with some changed, and the error a call throws. */
import { DEFAULT_PARSE_LIMITS, type ParseLimitError, type ParseLimits } from '../../client/parse/limits.js';

export const limitsWith = (over: Partial<ParseLimits>): ParseLimits => ({ ...DEFAULT_PARSE_LIMITS, ...over });

/** The error `fn` throws; fails the test when it throws none. */
export function refusal(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
}

/** Which limit `fn` was refused by (undefined: it was not refused). */
export function limitOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as ParseLimitError).limit;
  }
  return undefined;
}
