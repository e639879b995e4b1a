/**
 * The layers (.dependency-cruiser.cjs, drawn in docs/architecture.md) hold in this repository, and
 * the rules have teeth: a small tree with one upward import of each kind is refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { ARCHITECTURE_PAGE, withLayersTable } from '../../scripts/house/layers-table.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(root, '.dependency-cruiser.cjs');

/** dependency-cruiser over `paths` in `cwd` with the repository's rules: exit code and output */
function cruise(cwd: string, paths: string[]): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [depcruise, '--config', config, '--output-type', 'err', ...paths], { cwd, encoding: 'utf8', stdio: 'pipe' });
    return { code: 0, out };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, out: `${e.stdout}${e.stderr}` };
  }
}

describe('the layers', () => {
  test('src/ and reporters/ break no layer rule (fix: import from a lower layer, or move the code; see docs/architecture.md)', () => {
    const { code, out } = cruise(root, ['src', 'reporters']);
    expect(out).toMatch(/no dependency violations found/);
    expect(code).toBe(0);
  }, 120_000);

  test('docs/architecture.md shows the rules as they are (fix: npx tsx scripts/house/layers-table.ts --write)', () => {
    const page = readFileSync(ARCHITECTURE_PAGE, 'utf8');
    expect(page).toBe(withLayersTable(page));
    expect(page).toContain('| judge | `src/judge/` |');
  });

  const tree = mkdtempSync(join(tmpdir(), 'lsm-layers-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));

  test('an upward import of each kind is refused, named by its rule', () => {
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      'package.json': JSON.stringify({ name: 'layers-fixture', type: 'module' }),
      'src/shapes/timeline.ts': "import { readFileSync } from 'node:fs';\nexport type T = { n: number };\nexport const f = readFileSync;\n",
      'src/client/stream.ts': "import type { T } from '../shapes/timeline.js';\nexport const t: T = { n: 1 };\n",
      'src/metrics/figures.ts': "import { t } from '../client/stream.js';\nexport const n = t.n;\n",
      'src/load/cell.ts': "import { n } from '../metrics/figures.js';\nexport const m = n;\n",
      'src/sim/server.ts': "import { m } from '../load/cell.js';\nexport const s = m;\n",
      'src/pages/markdown.ts': "import { t } from '../client/stream.js';\nexport const p = t;\n",
      'src/engines/vllm.ts': "import { m } from '../load/cell.js';\nexport const e = m;\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
    copyFileSync(config, join(tree, '.dependency-cruiser.cjs'));
    const { code, out } = cruise(tree, ['src']);
    expect(code).not.toBe(0);
    expect(out).toMatch(/shapes-import-nothing: src\/shapes\/timeline\.ts → (node:)?fs/);
    expect(out).toMatch(/layer-metrics: src\/metrics\/figures\.ts → src\/client\/stream\.ts/);
    expect(out).toMatch(/layer-sim: src\/sim\/server\.ts → src\/load\/cell\.ts/);
    expect(out).toMatch(/layer-pages: src\/pages\/markdown\.ts → src\/client\/stream\.ts/);
    expect(out).toMatch(/layer-engines: src\/engines\/vllm\.ts → src\/load\/cell\.ts/);
    // allowed imports are not reported: the load runner may use metrics, the client its shapes
    expect(out).not.toMatch(/src\/load\/cell\.ts → src\/metrics/);
    expect(out).not.toMatch(/src\/client\/stream\.ts → src\/shapes/);
  }, 120_000);
});
