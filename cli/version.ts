/** labctl's own version: the package's. */
import pkg from '../package.json' with { type: 'json' };

export const CLIENT_VERSION: string = pkg.version;
