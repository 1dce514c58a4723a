/** One version for the server, the GUI's hello and GetVersion: the package's. */
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
