/**
 * Generates src/thresholds/thresholds.schema.json (the editor schema that threshold files name in
 * `$schema`) from the zod schema in schema.ts, so the two cannot drift.
 *
 *   npx tsx src/thresholds/gen-schema.ts           write the file
 *   npx tsx src/thresholds/gen-schema.ts --check   exit 1 when the file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ThresholdsFileSchema } from './schema.js';

export const THRESHOLDS_SCHEMA_PATH = fileURLToPath(new URL('./thresholds.schema.json', import.meta.url));

export function generateThresholdsSchema(): string {
  const generated = z.toJSONSchema(ThresholdsFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  const schema = {
    $schema,
    $id: 'urn:llm-speed-matrix:schema:thresholds:1',
    title: 'Speed-matrix thresholds',
    ...rest,
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

export function isThresholdsSchemaCurrent(): boolean {
  try {
    return readFileSync(THRESHOLDS_SCHEMA_PATH, 'utf8') === generateThresholdsSchema();
  } catch {
    return false;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    if (!isThresholdsSchemaCurrent()) {
      process.stderr.write(
        'src/thresholds/thresholds.schema.json is stale: it does not match src/thresholds/schema.ts.\n' +
          'Fix: run `npx tsx src/thresholds/gen-schema.ts` and commit the result.\n',
      );
      process.exitCode = 1;
    }
  } else {
    writeFileSync(THRESHOLDS_SCHEMA_PATH, generateThresholdsSchema());
    process.stdout.write(`wrote ${THRESHOLDS_SCHEMA_PATH}\n`);
  }
}
