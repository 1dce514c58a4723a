/**
 * Whether two objects share V8's hidden class (map). Natives syntax is switched on at run time
 * for the one function compiled after it (natives syntax must be compiled after the flag is
 * set), so the test process needs no flag.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--allow-natives-syntax');

export const sameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;
