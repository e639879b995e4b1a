/**
 * Validation of a result against speed-matrix.schema.json (the source of truth).
 *
 * The validator is built from the schema itself with zod 4's `z.fromJSONSchema` (zod is already a
 * dependency; no second validator needed). It covers every keyword the schema uses: type, enum,
 * const, required, additionalProperties, properties, items, $ref/$defs, minimum, exclusiveMinimum,
 * pattern. If the schema ever needs keywords zod does not translate (if/then/else,
 * unevaluatedProperties, external $ref), switch this file to ajv (its 2020 build) — the function
 * signature stays.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { SpeedMatrixResult } from '../shapes/result.js';

export const RESULT_SCHEMA_PATH = fileURLToPath(new URL('./speed-matrix.schema.json', import.meta.url));

let compiled: z.ZodType | undefined;
function validator(): z.ZodType {
  compiled ??= z.fromJSONSchema(JSON.parse(readFileSync(RESULT_SCHEMA_PATH, 'utf8')) as Parameters<typeof z.fromJSONSchema>[0]);
  return compiled;
}

export type ValidationOutcome = { ok: true; value: SpeedMatrixResult } | { ok: false; errors: string[] };

/** Check a parsed JSON value against the result schema; errors read `<path>: <message>`. */
export function validateResult(json: unknown): ValidationOutcome {
  const parsed = validator().safeParse(json);
  if (parsed.success) return { ok: true, value: json as SpeedMatrixResult };
  return {
    ok: false,
    errors: parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`),
  };
}

/** Like validateResult, but throws one error listing every problem. */
export function assertValidResult(json: unknown, what = 'speed-matrix result'): SpeedMatrixResult {
  const outcome = validateResult(json);
  if (!outcome.ok) {
    throw new Error(
      `${what} does not match the result schema (llm-speed-matrix/schemas/speed-matrix.schema.json):\n  ${outcome.errors.join('\n  ')}\n` +
        'This is a bug in the code that built the result (or the schema needs the new field).',
    );
  }
  return outcome.value;
}
