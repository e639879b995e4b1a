/**
 * Generates src/shapes/result.gen.ts from src/results/speed-matrix.schema.json.
 *
 *   npx tsx src/results/gen-types.ts           write the file
 *   npx tsx src/results/gen-types.ts --check   exit 1 when the file is stale (CI, unit test)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

export const SCHEMA_PATH = fileURLToPath(new URL('./speed-matrix.schema.json', import.meta.url));
export const GENERATED_PATH = fileURLToPath(new URL('../shapes/result.gen.ts', import.meta.url));

const BANNER = `/* eslint-disable */
/**
 * GENERATED from speed-matrix.schema.json by src/results/gen-types.ts — do not edit.
 * Change the schema, then run: npx tsx src/results/gen-types.ts
 */`;

/** The TypeScript source the schema generates (deterministic). */
export async function generateTypes(): Promise<string> {
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as JSONSchema;
  return compile(schema, 'SpeedMatrixResult', {
    bannerComment: BANNER,
    additionalProperties: false,
    unreachableDefinitions: true,
    strictIndexSignatures: true,
    unknownAny: true,
    format: true,
    style: { singleQuote: true, printWidth: 110 },
  });
}

/** True when the generated file on disk matches what the schema generates. */
export async function isGeneratedCurrent(): Promise<boolean> {
  let onDisk = '';
  try {
    onDisk = readFileSync(GENERATED_PATH, 'utf8');
  } catch {
    return false;
  }
  return onDisk === (await generateTypes());
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) {
    if (await isGeneratedCurrent()) return 0;
    process.stderr.write(
      'src/shapes/result.gen.ts is stale: it does not match src/results/speed-matrix.schema.json.\n' +
        'Fix: run `npx tsx src/results/gen-types.ts` and commit the result.\n',
    );
    return 1;
  }
  writeFileSync(GENERATED_PATH, await generateTypes());
  process.stdout.write(`wrote ${GENERATED_PATH}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
