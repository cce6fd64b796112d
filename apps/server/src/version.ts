import packageJson from '../package.json';

/** The server's version (apps/server/package.json), reported by /health and the OpenAPI document. */
export const VERSION: string = packageJson.version;
