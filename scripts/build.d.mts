/** Types of scripts/build.mjs, imported by this repository's vitest.config.ts. */
export function isStale(): boolean;
export function build(options?: { quiet?: boolean }): void;
/** Build when dist/ is missing or older than a source; true when it built. */
export function ensureBuilt(): boolean;
