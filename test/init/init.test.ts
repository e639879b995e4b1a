import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { parseInitArgs, runInit } from '../../src/init/init.js';
import { ConfigError } from '../../src/errors.js';
import { thresholdsSchemaRef } from '../../src/thresholds/update.js';
import { VITEST_PEER_RANGE, vitestSupport } from '../../src/meta/peer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** a project folder with a package.json and, unless told otherwise, vitest "installed" */
function project(vitestVersion: string | null = '4.1.12'): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-init-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-infra', private: true }));
  if (vitestVersion) {
    mkdirSync(join(dir, 'node_modules', 'vitest'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'vitest', 'package.json'), JSON.stringify({ name: 'vitest', version: vitestVersion, main: 'index.js' }));
  }
  return dir;
}

const actions = (r: ReturnType<typeof runInit>) => Object.fromEntries(r.files.map((f) => [f.path, f.action]));

test('init writes the bench files, shards, thresholds/, the workflow and a vitest config, and says so', () => {
  const dir = project();
  const r = runInit({ dir, force: false, shards: 2 });
  expect(actions(r)).toEqual({
    'bench/suite.ts': 'wrote',
    'bench/speed-matrix.bench.ts': 'wrote',
    'bench/shards/row-group-1.bench.ts': 'wrote',
    'bench/shards/row-group-2.bench.ts': 'wrote',
    'thresholds/README.md': 'wrote',
    // the sample prompt file the README's workload line runs
    'bench/workloads/sample.jsonl': 'wrote',
    '.github/workflows/speed-matrix.yml': 'wrote',
    // a CommonJS package (no "type": "module") gets an .mts config, which Vite loads as ESM
    'vitest.config.mts': 'wrote',
  });
  expect(r.configToEdit).toBeUndefined();
  expect(readFileSync(join(dir, 'bench/workloads/sample.jsonl'), 'utf8')).toBe(readFileSync(new URL('../../bench/workloads/sample.jsonl', import.meta.url), 'utf8'));
  // its own threshold file: thresholds/sim-tiny.json, which the -u line writes, holds synthetic budgets a workload run refuses
  expect(r.lines.join('\n')).toContain('LLM_BENCH_WORKLOAD=file:bench/workloads/sample.jsonl LLM_BENCH_SIM_PROFILE=tiny LLM_BENCH_NAME=sim-tiny-sample npx vitest bench --run');
  expect(r.lines.join('\n')).toContain('wrote     bench/speed-matrix.bench.ts');
  // the files import the package's entry points only
  expect(readFileSync(join(dir, 'bench/speed-matrix.bench.ts'), 'utf8')).toContain("from 'llm-speed-matrix'");
  expect(readFileSync(join(dir, 'vitest.config.mts'), 'utf8')).toContain("from 'llm-speed-matrix/vitest'");
  expect(readFileSync(join(dir, 'bench/suite.ts'), 'utf8')).toContain('export const ROW_GROUPS = 2;');
  const workflow = readFileSync(join(dir, '.github/workflows/speed-matrix.yml'), 'utf8');
  expect(workflow).toContain('shard: [1, 2]');
  expect(workflow).toContain('--shard=${{ matrix.shard }}/2');
  expect(workflow).toContain('--merge-reports=.vitest-reports');
  expect(workflow).toContain('LLM_BENCH_BASELINE=baseline/speed-matrix.json');
});

test('an ESM package gets vitest.config.ts', () => {
  const dir = project();
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-infra', type: 'module' }));
  expect(actions(runInit({ dir, force: false, shards: 4 }))['vitest.config.ts']).toBe('wrote');
});

test('a second init changes nothing; an edited file is kept unless --force', () => {
  const dir = project();
  runInit({ dir, force: false, shards: 4 });
  expect(new Set(Object.values(actions(runInit({ dir, force: false, shards: 4 }))))).toEqual(new Set(['unchanged']));

  writeFileSync(join(dir, 'bench/suite.ts'), "export const suite = { name: 'mine' };\nexport const ROW_GROUPS = 4;\n");
  const kept = runInit({ dir, force: false, shards: 4 });
  expect(actions(kept)['bench/suite.ts']).toBe('kept');
  expect(kept.lines.join('\n')).toContain('kept      bench/suite.ts (it exists and differs; --force overwrites it)');
  expect(readFileSync(join(dir, 'bench/suite.ts'), 'utf8')).toContain("name: 'mine'");

  const forced = runInit({ dir, force: true, shards: 4 });
  expect(actions(forced)['bench/suite.ts']).toBe('overwrote');
  expect(readFileSync(join(dir, 'bench/suite.ts'), 'utf8')).not.toContain("name: 'mine'");
});

test('an existing vitest config is not clobbered: init prints the line to add and exits non-zero', () => {
  const dir = project();
  const mine = "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['unit/**/*.test.ts'] } });\n";
  writeFileSync(join(dir, 'vitest.config.mts'), mine);
  const r = runInit({ dir, force: false, shards: 4 });
  expect(r.configToEdit).toBe('vitest.config.mts');
  expect(readFileSync(join(dir, 'vitest.config.mts'), 'utf8')).toBe(mine);
  expect(existsSync(join(dir, 'vitest.config.ts'))).toBe(false);
  const text = r.lines.join('\n');
  expect(text).toContain('vitest.config.mts exists, so init left it as it is');
  expect(text).toContain("import { withSpeedMatrix } from 'llm-speed-matrix/vitest';");
  expect(text).toContain('defineConfig(withSpeedMatrix(');
  // no step that cannot work yet: what comes first, and no bench command
  expect(text).toContain('first: add withSpeedMatrix to vitest.config.mts');
  expect(text).not.toContain('next:');
  expect(text).not.toContain('vitest bench');

  // once the line is in, init leaves it alone and is satisfied, and gives the commands
  writeFileSync(join(dir, 'vitest.config.mts'), "import { withSpeedMatrix } from 'llm-speed-matrix/vitest';\n" + mine);
  const again = runInit({ dir, force: false, shards: 4 });
  expect(again.configToEdit).toBeUndefined();
  expect(again.lines.join('\n')).toContain('next:\n  LLM_BENCH_SIM_PROFILE=tiny npx vitest bench --run');
  // every page the run writes, the HTML report with them
  expect(again.lines.join('\n')).toContain('reports/speed-matrix.md, reports/speed-matrix.html (open it in a browser) and reports/speed-matrix.json');
});

test('--force replaces a foreign vitest config and keeps the old one as .bak', () => {
  const dir = project();
  writeFileSync(join(dir, 'vite.config.js'), 'export default {};\n');
  const r = runInit({ dir, force: true, shards: 4 });
  expect(actions(r)['vite.config.js']).toBe('overwrote');
  expect(readFileSync(join(dir, 'vite.config.js.bak'), 'utf8')).toBe('export default {};\n');
  expect(readFileSync(join(dir, 'vite.config.js'), 'utf8')).toContain('withSpeedMatrix');
});

test('Vitest 4.1+ and 5.x are accepted; a later major runs with a note; the peer range says the same', () => {
  for (const v of ['4.1.0', '4.1.12', '5.0.0', '5.1.2']) {
    const r = runInit({ dir: project(v), force: false, shards: 2 });
    expect(r.files.length).toBeGreaterThan(0);
    expect(r.lines.join('\n')).not.toContain('newer than');
  }
  expect(runInit({ dir: project('6.0.0'), force: false, shards: 2 }).lines[0]).toMatch(/vitest 6\.0\.0 is newer than the versions .* checked with/);
  expect(['4.0.9', '3.2.4', 'x'].map(vitestSupport)).toEqual(['old', 'old', 'old']);
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { peerDependencies: Record<string, string> };
  expect(manifest.peerDependencies.vitest).toBe(VITEST_PEER_RANGE);
});

test('without vitest, without package.json, or with an old vitest: one line naming the fix, nothing written', () => {
  const noVitest = project(null);
  expect(() => runInit({ dir: noVitest, force: false, shards: 4 })).toThrow(/vitest is not installed.*Fix: npm i -D vitest$/);
  expect(existsSync(join(noVitest, 'bench'))).toBe(false);

  const old = project('3.2.4');
  expect(() => runInit({ dir: old, force: false, shards: 4 })).toThrow(/vitest 3\.2\.4 is installed.*Fix: npm i -D vitest@latest .*on Node 20: npm i -D vitest@\^4\.1\.0/);
  expect(() => runInit({ dir: project('4.0.18'), force: false, shards: 4 })).toThrow(/vitest 4\.0\.18 is installed/);

  const bare = mkdtempSync(join(tmpdir(), 'lsm-init-'));
  dirs.push(bare);
  expect(() => runInit({ dir: bare, force: false, shards: 4 })).toThrow(/no package\.json in .*Fix: .*npm init -y/);
});

test('init arguments are checked', () => {
  expect(parseInitArgs(['--force', '--shards', '3', '--dir=/tmp/x'])).toEqual({ force: true, shards: 3, dir: '/tmp/x' });
  expect(() => parseInitArgs(['--shards', '0'])).toThrow(ConfigError);
  expect(() => parseInitArgs(['--shards', '0'])).toThrow(/--shards 0 is invalid: use an integer 1–32/);
  expect(() => parseInitArgs(['--forse'])).toThrow(/unknown option "--forse" \(did you mean --force\?\)/);
  expect(() => parseInitArgs(['--dir'])).toThrow(/--dir needs a folder, e\.g\. --dir packages\/infra/);
  expect(() => parseInitArgs(['--dir='])).toThrow(/--dir needs a folder/);
  expect(() => parseInitArgs(['--force=yes'])).toThrow(/--force takes no value/);
  expect(() => parseInitArgs(['extra'])).toThrow(/unexpected argument "extra"/);
  expect(parseInitArgs(['-h'], 'allow-help')).toBe('help');
});

test('in this repository, a module built into dist/ points a new threshold file at the committed schema in src/ (dist/ is not committed)', async () => {
  const { repositorySchema } = await import('../../src/thresholds/update.js');
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../../', import.meta.url));
  expect(repositorySchema(join(root, 'dist', 'src', 'thresholds', 'thresholds.schema.json'))).toBe(join(root, 'src', 'thresholds', 'thresholds.schema.json'));
  // an installed package has no src/: the schema beside the module stays
  const installed = join(tmpdir(), 'no-such-project', 'node_modules', 'llm-speed-matrix', 'dist', 'src', 'thresholds', 'thresholds.schema.json');
  expect(repositorySchema(installed)).toBe(installed);
  expect(repositorySchema(join(root, 'src', 'thresholds', 'thresholds.schema.json'))).toBe(join(root, 'src', 'thresholds', 'thresholds.schema.json'));
  expect(thresholdsSchemaRef(join(root, 'thresholds', 'new.json'))).toBe('../src/thresholds/thresholds.schema.json');
});

test("a new threshold file's $schema points at the schema shipped with the package, relative to the file", () => {
  const ref = thresholdsSchemaRef('/proj/thresholds/my.json');
  expect(ref.endsWith('/thresholds/thresholds.schema.json')).toBe(true);
  expect(ref.startsWith('../')).toBe(true);
  expect(ref).not.toContain('\\');
});

test('a kept bench/suite.ts decides the row groups; a different --shards without --force is refused', () => {
  const dir = project();
  runInit({ dir, force: false, shards: 2 });
  // a later init without --shards follows the suite's ROW_GROUPS (workflow and files agree)
  const again = runInit({ dir, force: false });
  expect(again.files.filter((f) => f.path.startsWith('bench/shards/')).map((f) => f.path)).toEqual([
    'bench/shards/row-group-1.bench.ts',
    'bench/shards/row-group-2.bench.ts',
  ]);
  expect(new Set(again.files.map((f) => f.action))).toEqual(new Set(['unchanged']));
  expect(() => runInit({ dir, force: false, shards: 6 })).toThrow(/init --shards 6: bench\/suite\.ts says ROW_GROUPS = 2.*Fix: .*--force/);
  expect(existsSync(join(dir, 'bench/shards/row-group-3.bench.ts'))).toBe(false);
  // --force rewrites the suite, the files and the workflow together
  runInit({ dir, force: true, shards: 3 });
  expect(readFileSync(join(dir, 'bench/suite.ts'), 'utf8')).toContain('ROW_GROUPS = 3;');
  expect(readFileSync(join(dir, '.github/workflows/speed-matrix.yml'), 'utf8')).toContain('shard: [1, 2, 3]');
  // the fix says which files to add, or to remove
  expect(() => runInit({ dir, force: false, shards: 6 })).toThrow(
    /set ROW_GROUPS = 6 there, add bench\/shards\/row-group-4\.bench\.ts … row-group-6\.bench\.ts \(each a copy of row-group-1\.bench\.ts with its own index\) and set the shard list/,
  );
  expect(() => runInit({ dir, force: false, shards: 2 })).toThrow(/set ROW_GROUPS = 2 there, remove bench\/shards\/row-group-3\.bench\.ts and set the shard list of \.github\/workflows\/speed-matrix\.yml to match; or run init --shards 2 --force/);
});

test('in a project with the package installed, $schema points into node_modules/llm-speed-matrix (not a store path)', () => {
  const dir = project();
  const schemas = join(dir, 'node_modules', 'llm-speed-matrix', 'dist', 'schemas');
  mkdirSync(schemas, { recursive: true });
  writeFileSync(join(schemas, 'thresholds.schema.json'), '{}');
  expect(thresholdsSchemaRef(join(dir, 'thresholds', 'my-vllm.json'))).toBe('../node_modules/llm-speed-matrix/dist/schemas/thresholds.schema.json');
  expect(thresholdsSchemaRef(join(dir, 'ci', 'thresholds', 'my-vllm.json'))).toBe('../../node_modules/llm-speed-matrix/dist/schemas/thresholds.schema.json');
});
