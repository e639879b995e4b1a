/**
 * The workflow `init` writes, parsed as YAML: it installs, caches and runs with the project's
 * package manager; it has concurrency and timeouts; only the comment job may write to pull
 * requests; the baseline step's shell follows the stated rule (run with a fake `gh`); and the
 * comment script posts, then updates, one comment on a local HTTP server standing in for GitHub.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { parse } from 'yaml';
import { runInit } from '../../src/init/init.js';
import { detectPackageManager, parsePackageManagerField } from '../../src/init/package-manager.js';
import { COMMENT_MARKER, WORKFLOW } from '../../src/init/templates.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>, manifest: Record<string, unknown> = { name: 'p' }): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-wf-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

interface Step { uses?: string; run?: string; name?: string; if?: string; with?: Record<string, unknown>; env?: Record<string, string>; 'continue-on-error'?: unknown }
interface Job { 'runs-on': string; 'timeout-minutes'?: number; if?: string; needs?: string[]; permissions?: Record<string, string>; steps: Step[] }
interface Workflow { concurrency: { group: string; 'cancel-in-progress': boolean }; permissions: Record<string, string>; jobs: Record<string, Job> }

test('the package manager: packageManager field first, then the lock file, then npm without a lock', () => {
  const cases: [Record<string, string>, Record<string, unknown> | undefined, string, string, string | undefined][] = [
    // files, package.json, name, install, cache
    [{ 'package-lock.json': '{}' }, undefined, 'npm', 'npm ci', 'npm'],
    [{}, undefined, 'npm', 'npm install', undefined],
    [{ 'pnpm-lock.yaml': '' }, undefined, 'pnpm', 'pnpm install --frozen-lockfile', 'pnpm'],
    [{ 'pnpm-lock.yaml': '' }, { name: 'p', packageManager: 'pnpm@10.4.1+sha512.abc' }, 'pnpm', 'pnpm install --frozen-lockfile', 'pnpm'],
    [{ 'yarn.lock': '' }, undefined, 'yarn', 'yarn install --frozen-lockfile', 'yarn'],
    [{ 'yarn.lock': '' }, { name: 'p', packageManager: 'yarn@4.5.0' }, 'yarn', 'yarn install --immutable', 'yarn'],
    [{ 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\n' }, undefined, 'yarn', 'yarn install --immutable', 'yarn'],
    [{ 'bun.lockb': '' }, undefined, 'bun', 'bun install --frozen-lockfile', undefined],
    [{ 'bun.lock': '' }, undefined, 'bun', 'bun install --frozen-lockfile', undefined],
    // the field wins over a stray lock file of another tool; without its own lock, no frozen install
    [{ 'package-lock.json': '{}' }, { name: 'p', packageManager: 'pnpm@10' }, 'pnpm', 'pnpm install', undefined],
  ];
  for (const [files, manifest, name, install, cache] of cases) {
    const pm = detectPackageManager(folder(files, manifest));
    expect({ name: pm.name, install: pm.install, cache: pm.cache }, JSON.stringify([files, manifest])).toEqual({ name, install, cache });
  }
  expect(parsePackageManagerField('pnpm@10.4.1+sha512.x')).toEqual({ name: 'pnpm', major: 10 });
  expect(parsePackageManagerField('deno@2')).toBeUndefined();
  expect(parsePackageManagerField(42)).toBeUndefined();
});

test('each package manager gets its own setup, install, cache and run steps; concurrency, timeouts, permissions', () => {
  const setups: Record<string, { files: Record<string, string>; manifest?: Record<string, unknown>; exec: string; setup?: string }> = {
    npm: { files: { 'package-lock.json': '{}' }, exec: 'npx vitest' },
    pnpm: { files: { 'pnpm-lock.yaml': '' }, manifest: { name: 'p', packageManager: 'pnpm@10.4.1' }, exec: 'pnpm exec vitest', setup: 'pnpm/action-setup@v4' },
    yarn: { files: { 'yarn.lock': '' }, exec: 'yarn vitest' },
    bun: { files: { 'bun.lock': '' }, exec: 'bunx vitest', setup: 'oven-sh/setup-bun@v2' },
  };
  for (const [name, s] of Object.entries(setups)) {
    const pm = detectPackageManager(folder(s.files, s.manifest));
    const text = WORKFLOW(3, pm);
    const wf = parse(text) as Workflow;
    expect(Object.keys(wf.jobs)).toEqual(['matrix', 'merge', 'comment']);
    expect(wf.concurrency.group).toContain('github.event.pull_request.number || github.ref');
    expect(wf.permissions).toEqual({ contents: 'read', actions: 'read' });
    for (const [jobName, job] of Object.entries(wf.jobs)) {
      expect(job['timeout-minutes'], `${name} ${jobName}`).toBeGreaterThan(0);
      // nothing is allowed to fail quietly
      expect(job.steps.some((step) => 'continue-on-error' in step), `${name} ${jobName}`).toBe(false);
    }
    for (const jobName of ['matrix', 'merge']) {
      const steps = wf.jobs[jobName]!.steps;
      const node = steps.find((step) => step.uses === 'actions/setup-node@v4')!;
      expect(node.with?.['node-version']).toBe(24);
      expect(node.with?.cache, name).toBe(pm.cache);
      expect(steps.some((step) => step.run === pm.install), `${name} installs with ${pm.install}`).toBe(true);
      if (s.setup) expect(steps.findIndex((step) => step.uses === s.setup)).toBeLessThan(steps.indexOf(node));
      const vitestRuns = steps.filter((step) => step.run?.includes('vitest'));
      expect(vitestRuns.length).toBe(1);
      expect(vitestRuns[0]!.run!.startsWith(`${s.exec} `), `${name}: ${vitestRuns[0]!.run}`).toBe(true);
      if (name !== 'npm') expect(text).not.toMatch(/npm ci|npx |cache: npm/);
    }
    const comment = wf.jobs.comment!;
    expect(comment.permissions).toEqual({ 'pull-requests': 'write' });
    expect(comment.if).toContain("github.event_name == 'pull_request'");
    // a fork's pull request has a read-only token: the comment is skipped, the matrix runs
    expect(comment.if).toContain('github.event.pull_request.head.repo.full_name == github.repository');
    expect(comment.needs).toEqual(['merge']);
    expect(wf.jobs.matrix!.permissions).toBeUndefined();
  }
});

test('a Yarn 2+ project enables Corepack before setup-node; pnpm without the field names a version', () => {
  const yarn = parse(WORKFLOW(2, detectPackageManager(folder({ 'yarn.lock': '' }, { name: 'p', packageManager: 'yarn@4.5.0' })))) as Workflow;
  const steps = yarn.jobs.matrix!.steps;
  expect(steps.findIndex((s) => s.run?.startsWith('corepack enable'))).toBeLessThan(steps.findIndex((s) => s.uses === 'actions/setup-node@v4'));
  const pnpm = parse(WORKFLOW(2, detectPackageManager(folder({ 'pnpm-lock.yaml': '' })))) as Workflow;
  expect(pnpm.jobs.matrix!.steps.find((s) => s.uses === 'pnpm/action-setup@v4')!.with).toEqual({ version: 10 });
});

test('init writes the workflow for the detected manager and says which', () => {
  const dir = folder({ 'pnpm-lock.yaml': '' }, { name: 'p', packageManager: 'pnpm@10.4.1' });
  mkdirSync(join(dir, 'node_modules', 'vitest'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'vitest', 'package.json'), JSON.stringify({ name: 'vitest', version: '5.1.2' }));
  const r = runInit({ dir, force: false, shards: 2 });
  expect(r.lines.join('\n')).toContain('the workflow installs with pnpm (`pnpm install --frozen-lockfile`, from the packageManager field)');
  expect(readFileSync(join(dir, '.github/workflows/speed-matrix.yml'), 'utf8')).toContain('pnpm exec vitest --merge-reports=.vitest-reports');
});

/** The baseline step's shell, run with bash and a fake `gh` that answers as told. */
function runBaseline(gh: { runId: string; download: 'ok' | 'fail' | 'empty' }) {
  const wf = parse(WORKFLOW(2)) as Workflow;
  const step = wf.jobs.matrix!.steps.find((s) => s.name?.startsWith('baseline'))!;
  expect(step.if).toBe("github.event_name == 'pull_request'");
  const dir = folder({});
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const fake = join(bin, 'gh');
  writeFileSync(
    fake,
    `#!/usr/bin/env bash
if [ "$1 $2" = "run list" ]; then echo "${gh.runId}"; exit 0; fi
if [ "$1 $2" = "run download" ]; then
  case "${gh.download}" in
    ok) mkdir -p baseline && echo '{}' > baseline/speed-matrix.json; exit 0 ;;
    empty) mkdir -p baseline; exit 0 ;;
    fail) echo "no valid artifacts found to download" >&2; exit 1 ;;
  esac
fi
exit 3
`,
  );
  chmodSync(fake, 0o755);
  const summary = join(dir, 'summary.md');
  const env = join(dir, 'env');
  writeFileSync(summary, '');
  writeFileSync(env, '');
  const r = spawnSync('bash', ['-e', '-c', step.run!], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, GITHUB_REPOSITORY: 'me/infra', GITHUB_STEP_SUMMARY: summary, GITHUB_ENV: env },
  });
  return { code: r.status, out: r.stdout + r.stderr, summary: readFileSync(summary, 'utf8'), env: readFileSync(env, 'utf8') };
}

test('the baseline rule: the first run is ungated and says so; a failed download fails the job; a good one gates', () => {
  const first = runBaseline({ runId: '', download: 'fail' });
  expect(first.code).toBe(0);
  expect(first.out).toContain('::warning::ungated: main has no successful speed-matrix run yet');
  expect(first.summary).toContain('**Ungated**');
  expect(first.env).toBe('');

  const failed = runBaseline({ runId: '1234', download: 'fail' });
  expect(failed.code).toBe(1);
  expect(failed.out).toContain("::error::main's run 1234 has no downloadable speed-matrix artifact");
  expect(failed.env).toBe('');

  const empty = runBaseline({ runId: '1234', download: 'empty' });
  expect(empty.code).toBe(1);
  expect(empty.out).toContain('has no speed-matrix.json');

  const ok = runBaseline({ runId: '1234', download: 'ok' });
  expect(ok.code).toBe(0);
  expect(ok.env).toBe('LLM_BENCH_BASELINE=baseline/speed-matrix.json\n');
});

interface Comment { id: number; body: string; user: string }

/** A stand-in for GitHub's issue-comments API on loopback: list (paged), create, update. */
async function fakeGitHub(initial: Comment[]) {
  const comments = [...initial];
  const requests: string[] = [];
  let nextId = 1000;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push(`${req.method} ${url.pathname}${url.search}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== 'Bearer t0ken') return send(401, { message: 'Bad credentials' });
      let m = /^\/repos\/me\/infra\/issues\/7\/comments$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const page = Number(url.searchParams.get('page') ?? 1);
        const per = Number(url.searchParams.get('per_page') ?? 30);
        return send(200, comments.slice((page - 1) * per, page * per));
      }
      if (m && req.method === 'POST') {
        const c = { id: nextId++, body: (JSON.parse(raw) as { body: string }).body, user: 'github-actions[bot]' };
        comments.push(c);
        return send(201, c);
      }
      m = /^\/repos\/me\/infra\/issues\/comments\/(\d+)$/.exec(url.pathname);
      if (m && req.method === 'PATCH') {
        const c = comments.find((x) => x.id === Number(m![1]));
        if (!c) return send(404, { message: 'Not Found' });
        c.body = (JSON.parse(raw) as { body: string }).body;
        return send(200, c);
      }
      send(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, comments, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The comment job's github-script text, run as github-script runs it (require, context, core). */
async function runCommentScript(apiUrl: string, cwd: string): Promise<string[]> {
  const wf = parse(WORKFLOW(2)) as Workflow;
  const step = wf.jobs.comment!.steps.find((s) => s.uses === 'actions/github-script@v7')!;
  expect(step.env).toEqual({ GITHUB_TOKEN: '${{ github.token }}' });
  const script = step.with!.script as string;
  const logs: string[] = [];
  const context = { repo: { owner: 'me', repo: 'infra' }, issue: { number: 7 }, serverUrl: 'https://github.com', runId: 99 };
  const core = { info: (line: string) => logs.push(line) };
  const require = createRequire(join(cwd, 'x.js'));
  const before = { api: process.env.GITHUB_API_URL, token: process.env.GITHUB_TOKEN, cwd: process.cwd() };
  process.env.GITHUB_API_URL = apiUrl;
  process.env.GITHUB_TOKEN = 't0ken';
  // the script reads reports/… relative to the job's folder
  const fsOf = { ...require('fs'), existsSync: (p: string) => require('fs').existsSync(join(cwd, p)), readFileSync: (p: string, e: string) => require('fs').readFileSync(join(cwd, p), e) };
  try {
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<void>;
    await new AsyncFunction('require', 'context', 'core', script)((id: string) => (id === 'fs' ? fsOf : require(id)), context, core);
  } finally {
    process.env.GITHUB_API_URL = before.api;
    process.env.GITHUB_TOKEN = before.token;
    if (before.api === undefined) delete process.env.GITHUB_API_URL;
    if (before.token === undefined) delete process.env.GITHUB_TOKEN;
  }
  return logs;
}

test('the comment job posts one comment with the diff, then updates that same comment on the next push', async () => {
  // 120 other comments first, so the marker's comment is found on the second page
  const others = Array.from({ length: 120 }, (_, i) => ({ id: i + 1, body: `review comment ${i}`, user: 'someone' }));
  const gh = await fakeGitHub(others);
  const cwd = folder({});
  mkdirSync(join(cwd, 'reports'));
  try {
    writeFileSync(join(cwd, 'reports', 'speed-matrix-diff.md'), '| cell | before | after |\n| 0/1 | 100 | 90 |\n');
    const first = await runCommentScript(gh.url, cwd);
    expect(first[0]).toMatch(/^created comment \d+$/);
    const ours = () => gh.comments.filter((c) => c.body.startsWith(COMMENT_MARKER));
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.body).toContain('| 0/1 | 100 | 90 |');
    expect(ours()[0]!.body).toContain('https://github.com/me/infra/actions/runs/99');

    writeFileSync(join(cwd, 'reports', 'speed-matrix-diff.md'), '| cell | before | after |\n| 0/1 | 100 | 101 |\n');
    const second = await runCommentScript(gh.url, cwd);
    expect(second[0]).toBe(`updated comment ${ours()[0]!.id}`);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.body).toContain('| 0/1 | 100 | 101 |');
    expect(ours()[0]!.body).not.toContain('| 0/1 | 100 | 90 |');
    expect(gh.comments).toHaveLength(121);
    expect(gh.requests.filter((r) => r.startsWith('PATCH'))).toHaveLength(1);
    expect(gh.requests.filter((r) => r.startsWith('POST'))).toHaveLength(1);

    // no diff page (no baseline yet): the comment says the run was ungated
    rmSync(join(cwd, 'reports', 'speed-matrix-diff.md'));
    await runCommentScript(gh.url, cwd);
    expect(ours()[0]!.body).toContain('**Ungated**');
  } finally {
    await gh.close();
  }
});

test('the comment script fails loudly on an API error (a bad token), naming the request', async () => {
  const gh = await fakeGitHub([]);
  const cwd = folder({});
  try {
    const before = process.env.GITHUB_TOKEN;
    // runCommentScript sets the right token; break it by pointing at a path the fake rejects
    await expect(runCommentScript(`${gh.url}/nope`, cwd)).rejects.toThrow(/GET \/repos\/me\/infra\/issues\/7\/comments\?per_page=100&page=1: HTTP 404/);
    expect(process.env.GITHUB_TOKEN).toBe(before);
  } finally {
    await gh.close();
  }
});

test('the generated workflow is valid YAML whose shell steps parse under bash -n', () => {
  const wf = parse(WORKFLOW(4)) as Workflow;
  for (const job of Object.values(wf.jobs)) {
    for (const step of job.steps) {
      if (!step.run) continue;
      const script = step.run.replace(/\$\{\{[^}]*\}\}/g, 'X');
      execFileSync('bash', ['-n', '-c', script]);
    }
  }
});

test('docs/ci.md shows the workflow as init writes it for npm (2 shards)', () => {
  const doc = readFileSync(new URL('../../docs/ci.md', import.meta.url), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(block).toBe(WORKFLOW(2));
});
