/**
 * The house rules that are not imports (scripts/house/sizes.ts): file and function lengths, and
 * the environment read only in src/config. Each is shown to catch a breach on a small source.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { breachesOf, houseBreaches, MAX_FILE_LINES, MAX_FUNCTION_LINES, sameNameBreaches } from '../../scripts/house/sizes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('house rules', () => {
  test('src/ and reporters/ have no breach (fix: split the file or function by job; read the variable in src/config)', () => {
    const lines = houseBreaches(root).map((b) => `${b.file}:${b.line} ${b.rule}: ${b.text}`);
    expect(lines).toEqual([]);
  });

  test('a long file, a long function and process.env outside src/config are each caught', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const x${i} = ${i};`).join('\n');
    const longFunction = `export function tooLong() {\n${body}\n}\n`;
    expect(breachesOf('src/a.ts', longFunction).map((b) => b.rule)).toEqual(['function-lines']);
    const arrow = `export const tooLong = () => {\n${body}\n};\n`;
    expect(breachesOf('src/a.ts', arrow)[0]?.text).toMatch(/^tooLong: 122 lines/);
    const longFile = Array.from({ length: MAX_FILE_LINES + 1 }, (_, i) => `export const y${i} = ${i};`).join('\n') + '\n';
    expect(breachesOf('src/b.ts', longFile).map((b) => b.rule)).toEqual(['file-lines']);
    expect(breachesOf('src/b.gen.ts', longFile)).toEqual([]);
    const env = "export const out = process.env.LLM_BENCH_OUT;\n";
    expect(breachesOf('src/results/write.ts', env).map((b) => b.rule)).toEqual(['process-env']);
    expect(breachesOf('src/config/env.ts', env)).toEqual([]);
    // a workflow text that mentions process.env is not a read
    expect(breachesOf('src/init/templates.ts', "export const text = 'const t = process.env.GITHUB_TOKEN';\n")).toEqual([]);
  });

  test('a spread call argument is caught (Math.max(...x) throws past about 120,000 elements); a forwarded rest parameter is not', () => {
    const rules = (text: string) => breachesOf('src/a.ts', text).map((b) => b.rule);
    expect(rules('export const top = (xs: number[]) => Math.max(...xs);\n')).toEqual(['spread-argument']);
    expect(rules('export function add(out: number[], xs: number[]) { out.push(1, ...xs); }\n')).toEqual(['spread-argument']);
    expect(rules('export const make = (xs: number[]) => new Set(...[xs]);\n')).toEqual(['spread-argument']);
    expect(rules('export const top = (xs: number[]) => Math.max.apply(null, xs);\n')).toEqual(['spread-argument']);
    expect(rules('export const top = (xs: number[]) => Reflect.apply(Math.max, null, xs);\n')).toEqual(['spread-argument']);
    // a rest parameter passed on, and spreads into array and object literals, take no call arguments per element
    expect(rules('export const wrap = (f: (...a: number[]) => void) => (...args: number[]) => f(...args);\n')).toEqual([]);
    expect(rules('export const both = (a: number[], b: number[]) => [...a, ...b];\nexport const o = (x: object) => ({ ...x });\n')).toEqual([]);
    // a spread of an outer function's rest parameter inside an inner one is not its own arguments
    expect(rules('export function outer(...args: number[]) { return () => Math.max(...args); }\n')).toEqual(['spread-argument']);
  });

  test('two files of one name in different folders are caught, unless the name is one role', () => {
    expect(sameNameBreaches(['src/load/cell.ts', 'src/prompts/cell.ts']).map((b) => b.file)).toEqual(['src/load/cell.ts', 'src/prompts/cell.ts']);
    expect(sameNameBreaches(['src/sim/cli.ts', 'src/report/cli.ts', 'src/a/unique.ts'])).toEqual([]);
  });
});
