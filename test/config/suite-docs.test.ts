/**
 * Types that teach: what an editor shows for `defineSpeedMatrix` comes from the emitted
 * declarations (dist/, built by vitest.config.ts before the tests), so they are read here with the
 * TypeScript compiler as a user's editor reads them: from the package entry's `.d.ts`, through
 * `defineSpeedMatrix`'s parameters, every field at every depth. Each must carry a comment, an
 * `@example`, a `@default` when it is optional, and a unit when it is a number.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const entry = join(root, 'dist', 'src', 'index.d.ts');

interface FieldDoc {
  path: string;
  text: string;
  tags: Record<string, string>;
  optional: boolean;
  numeric: boolean;
  declaredIn: string;
}

/** Every field reachable from `defineSpeedMatrix`'s parameters, with its documentation. */
function documentedFields(): { fn: { text: string; tags: Record<string, string> }; fields: FieldDoc[] } {
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const moduleSymbol = checker.getSymbolAtLocation(source)!;
  const define = checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'defineSpeedMatrix')!;
  const resolved = define.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(define) : define;
  const tagsOf = (s: ts.Symbol): Record<string, string> =>
    Object.fromEntries(s.getJsDocTags(checker).map((t) => [t.name, ts.displayPartsToString(t.text)]));
  const fn = { text: ts.displayPartsToString(resolved.getDocumentationComment(checker)), tags: tagsOf(resolved) };
  const signature = checker.getSignaturesOfType(checker.getTypeOfSymbol(resolved), ts.SignatureKind.Call)[0]!;

  const fields: FieldDoc[] = [];
  const ancestors = new Set<ts.Type>(); // the types above this one: a cycle stops, a shared type is walked at each place
  const isNumeric = (t: ts.Type): boolean => {
    const n = checker.getNonNullableType(t);
    if (n.flags & ts.TypeFlags.NumberLike) return true;
    return checker.isArrayType(n) && isNumeric(checker.getTypeArguments(n as ts.TypeReference)[0]!);
  };
  const walk = (type: ts.Type, path: string): void => {
    const t = checker.getNonNullableType(type);
    if (t.isUnion()) {
      for (const member of t.types) walk(member, path);
      return;
    }
    if (!(t.flags & ts.TypeFlags.Object) || checker.isArrayType(t) || t.getCallSignatures().length > 0 || ancestors.has(t)) return;
    ancestors.add(t);
    for (const prop of t.getProperties()) {
      const decl = prop.declarations?.[0];
      fields.push({
        path: path ? `${path}.${prop.name}` : prop.name,
        text: ts.displayPartsToString(prop.getDocumentationComment(checker)),
        tags: tagsOf(prop),
        optional: (prop.flags & ts.SymbolFlags.Optional) !== 0,
        numeric: isNumeric(checker.getTypeOfSymbol(prop)),
        declaredIn: decl ? decl.getSourceFile().fileName.slice(root.length + 1) : '?',
      });
      walk(checker.getTypeOfSymbol(prop), path ? `${path}.${prop.name}` : prop.name);
    }
    ancestors.delete(t);
  };
  const [suite, options] = signature.getParameters();
  walk(checker.getTypeOfSymbol(suite!), '');
  walk(checker.getTypeOfSymbol(options!), 'options');
  return { fn, fields };
}

/** How a number's unit is said: in ms, in seconds, tokens, requests, tok/s, a count, a fraction… */
const UNIT = /\b(ms|seconds|tokens|requests|tok\/s|count|fraction|1-based|figure's unit|no unit)\b/;

test('the built declarations document defineSpeedMatrix and every suite field: text, unit, default, example', () => {
  expect(existsSync(entry), `${entry} (npm run build)`).toBe(true);
  const { fn, fields } = documentedFields();
  expect(fn.text).toMatch(/bench file/);
  expect(fn.tags.example).toContain('await defineSpeedMatrix(');
  expect(Object.keys(fn.tags)).toEqual(expect.arrayContaining(['param', 'returns', 'example']));

  const paths = fields.map((f) => f.path);
  // the walk reached every part (so an empty walk cannot pass)
  for (const p of ['name', 'target.url', 'target.hardware.gpuCount', 'target.engineInfo.build', 'matrix.windowS', 'matrix.contexts', 'timeouts.gateSettleMs',
    'thresholds', 'slo.ttftMs', 'slo.ttftMs.p90.max', 'slo.perRequestTokensPerSecond.p10.min', 'slo.goodput.min', 'promptMode', 'options.rows.index',
    'workload.kind', 'workload.path', 'workload.in', 'workload.groups', 'workload.think']) {
    expect(paths).toContain(p);
  }
  expect(fields.length).toBeGreaterThan(60);

  const missing: string[] = [];
  for (const f of fields) {
    if (f.text.trim().length < 8) missing.push(`${f.path}: no comment (${f.declaredIn})`);
    if (!f.tags.example) missing.push(`${f.path}: no @example (${f.declaredIn})`);
    if (f.optional && !f.tags.default) missing.push(`${f.path}: optional without @default (${f.declaredIn})`);
    if (f.numeric && !UNIT.test(f.text)) missing.push(`${f.path}: a number without its unit (${f.declaredIn})`);
  }
  expect(missing).toEqual([]);
  // the declarations are the built ones, not the sources
  expect(new Set(fields.map((f) => f.declaredIn.split('/')[0]))).toEqual(new Set(['dist']));
});

test('the defaults the comments state are the ones resolveSuite applies', async () => {
  const { resolveSuite } = await import('../../src/config/resolve.js');
  const { fields } = documentedFields();
  const doc = (path: string): string => fields.find((f) => f.path === path)!.tags.default!;
  const real = resolveSuite({ target: { url: 'http://127.0.0.1:8000' } }, {});
  expect(doc('timeouts.headersMs')).toBe(String(real.timeouts.headersMs));
  expect(doc('timeouts.stallMs')).toBe(String(real.timeouts.stallMs));
  expect(doc('timeouts.drainMs')).toBe(String(real.timeouts.drainMs));
  expect(doc('timeouts.gateMs')).toBe(String(real.timeouts.gateMs));
  expect(doc('timeouts.gateSettleMs')).toBe(String(real.timeouts.gateSettleMs));
  expect(doc('clientLimitedLoopDelayMs')).toBe(String(real.clientLimitedLoopDelayMs));
  expect(doc('promptMode')).toBe(`'${real.promptMode}'`);
  expect(doc('target.endpoint')).toBe(`'${real.target.endpoint}'`);
  expect(doc('target.simProfile')).toBe(`'${resolveSuite({}, {}).simProfile}'`);
  expect(doc('matrix.windowS')).toBe(`${real.matrix.windowS}; ${resolveSuite({}, {}).matrix.windowS} against the simulator`);
  expect(doc('matrix.contexts')).toContain(JSON.stringify(real.matrix.contexts).replaceAll(',', ', '));
  expect(doc('matrix.concurrency')).toContain(JSON.stringify(real.matrix.concurrency).replaceAll(',', ', '));
  expect(doc('matrix.prefill')).toContain(JSON.stringify(real.matrix.prefill).replaceAll(',', ', '));
  expect(doc('matrix.maxOutputTokens')).toContain(String(real.matrix.maxOutputTokens));
  // the rate cells' defaults, as resolved for a suite with rates
  const rates = resolveSuite({ target: { url: 'http://127.0.0.1:8000' }, matrix: { rates: [1] } }, {}).rates!;
  expect(doc('matrix.rates')).toMatch(/^none/);
  expect(doc('matrix.arrival')).toBe(`'${rates.arrival}'`);
  expect(doc('matrix.rampS')).toMatch(new RegExp(`^${rates.rampS}\\b`));
  expect(doc('matrix.maxInFlight')).toBe(String(rates.maxInFlight));
  expect(doc('matrix.rateSeed')).toBe(String(rates.seed));
  // the workload's: synthetic, and each object key's default as parsed
  expect(doc('workload')).toContain(`'${real.workload.kind}'`);
  const shared = resolveSuite({ workload: { kind: 'sharedPrefix' } }, {}).workload as { groups: number; prefixTokens: number; suffixTokens: number; seed: number };
  expect([doc('workload.groups'), doc('workload.prefix'), doc('workload.suffix'), doc('workload.seed')]).toEqual([shared.groups, shared.prefixTokens, shared.suffixTokens, shared.seed].map(String));
  const turns = resolveSuite({ workload: { kind: 'multiTurn' } }, {}).workload as { turns: number; userTokens: number; systemTokens: number };
  expect([doc('workload.turns'), doc('workload.user'), doc('workload.system'), doc('workload.think')]).toEqual([String(turns.turns), String(turns.userTokens), String(turns.systemTokens), "'1s'"]);
  expect(resolveSuite({ workload: { kind: 'multiTurn' } }, {}).workload).toMatchObject({ thinkMs: { kind: 'fixed', value: 1000 } });
  expect(doc('workload.in')).toBe("'normal(1024,256)'");
  expect(resolveSuite({ workload: { kind: 'lengths' } }, {}).workload).toMatchObject({ input: { kind: 'normal', mean: 1024, sd: 256 } });
});
