/**
 * `vitest --ui` without @vitest/ui (an optional peer): withSpeedMatrix prints one line naming the
 * install at Vitest's version; nothing when the UI is not asked for or is installed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test, vi } from 'vitest';
import { uiHint, wantsUi, withSpeedMatrix } from '../../src/vitest.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  vi.restoreAllMocks();
});

function project(packages: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-ui-'));
  dirs.push(dir);
  for (const [name, version] of Object.entries(packages)) {
    mkdirSync(join(dir, 'node_modules', name), { recursive: true });
    writeFileSync(join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version }));
  }
  return dir;
}

test('the UI is asked for by --ui, --ui=true or test.ui, and turned off by --no-ui / --ui=false', () => {
  expect(wantsUi(['node', 'vitest', 'bench', '--watch', '--ui'])).toBe(true);
  expect(wantsUi(['node', 'vitest', '--ui=true'])).toBe(true);
  expect(wantsUi(['node', 'vitest'], true)).toBe(true);
  expect(wantsUi(['node', 'vitest', '--ui=false'], true)).toBe(false);
  expect(wantsUi(['node', 'vitest', '--no-ui'], true)).toBe(false);
  expect(wantsUi(['node', 'vitest', 'bench', '--run'])).toBe(false);
});

test('without @vitest/ui: one line with the install at vitest\'s version; with it, or without --ui: nothing', () => {
  const bare = project({ vitest: '5.1.2' });
  expect(uiHint(['vitest', '--ui'], undefined, bare)).toBe(
    '[speed-matrix] --ui needs @vitest/ui, an optional peer that is not installed. Fix: npm i -D @vitest/ui@5.1.2',
  );
  // found from a subfolder too (Node looks up the folders)
  const sub = join(bare, 'packages', 'infra');
  mkdirSync(sub, { recursive: true });
  expect(uiHint(['vitest', '--ui'], undefined, sub)).toContain('npm i -D @vitest/ui@5.1.2');
  expect(uiHint(['vitest', 'bench', '--run'], undefined, bare)).toBeUndefined();
  expect(uiHint(['vitest', '--ui'], undefined, project({ vitest: '4.1.12', '@vitest/ui': '4.1.12' }))).toBeUndefined();
});

test('withSpeedMatrix prints the hint once on stderr when --ui is on and @vitest/ui is missing', () => {
  const dir = project({ vitest: '4.1.12' });
  const writes: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  });
  withSpeedMatrix({ root: dir }, { argv: ['node', 'vitest', 'bench', '--watch', '--ui'] });
  withSpeedMatrix({ root: dir }, { argv: ['node', 'vitest', 'bench', '--run'] });
  expect(writes).toEqual(['[speed-matrix] --ui needs @vitest/ui, an optional peer that is not installed. Fix: npm i -D @vitest/ui@4.1.12\n']);
});
