/**
 * The two tiers run every test file: each `test/**\/*.test.ts` belongs to exactly one of the Vitest
 * projects that package.json's `test` (the fast tier) and `test:slow` scripts name, and no project
 * is in both. A file outside them (a new folder no project includes, a project missing from the
 * scripts) would pass CI without ever running.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { cleanEnv, root, vitestArgv } from '../compare/run-vitest.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

test("every test file runs under npm test or npm run test:slow, in one project (fix: add its folder to a project's include in vitest.config.ts, or the project to package.json's test or test:slow script)", () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const projectsOf = (script: string | undefined) => [...(script ?? '').matchAll(/--project[ =](\S+)/g)].map((m) => m[1]!);
  const fast = projectsOf(scripts.test);
  const slow = projectsOf(scripts['test:slow']);
  expect(fast.length, 'projects of npm test').toBeGreaterThan(0);
  expect(slow.length, 'projects of npm run test:slow').toBeGreaterThan(0);
  expect(fast.filter((p) => slow.includes(p)), 'projects in both tiers (they would run twice in CI)').toEqual([]);
  const projects = [...fast, ...slow];
  const listed = JSON.parse(
    execFileSync(...vitestArgv(['list', '--filesOnly', '--json', ...projects.flatMap((p) => ['--project', p])]), {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      // a plain `vitest list`, not one inside this run's worker, nor one shaped by a caller's LLM_BENCH_*
      env: cleanEnv(),
    }),
  ) as Array<{ file: string; projectName: string }>;
  const byFile = new Map<string, string[]>();
  for (const { file, projectName } of listed) byFile.set(relative(root, file), [...(byFile.get(relative(root, file)) ?? []), projectName]);
  const onDisk = testFiles(join(root, 'test')).sort();
  expect(onDisk.filter((f) => !byFile.has(f)), 'test files no project of either tier runs').toEqual([]);
  expect([...byFile].filter(([, p]) => p.length > 1), 'test files in two projects (they would run twice)').toEqual([]);
  expect(onDisk.length).toBeGreaterThan(100);
});

test('CI runs both tiers (fix: .ci/run runs npm test and npm run test:slow)', () => {
  const ci = readFileSync(join(root, '.ci', 'run'), 'utf8')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('#'));
  expect(ci.filter((l) => /^\s*npm test\s*$/.test(l)), 'a line running npm test').toHaveLength(1);
  expect(ci.filter((l) => /\bnpm run test:slow\b/.test(l) && !l.trimStart().startsWith('echo')), 'a line running npm run test:slow').toHaveLength(1);
});
