/**
 * The command's conventions: --version / -v / version print the version; `help <command>` and
 * `<command> --help` / `-h` print that command's usage on stdout with exit 0, for every command;
 * an unknown command or option gets a suggestion and exit 2.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test, vi } from 'vitest';
import { main } from '../../src/cli.js';
import { INIT_USAGE } from '../../src/init/init.js';
import { parseSimArgs, SIM_USAGE } from '../../src/sim/cli.js';
import { COMPARE_USAGE } from '../../src/compare/cli.js';
import { REPORT_USAGE } from '../../src/report/cli.js';
import { parseCommandArgs, suggest } from '../../src/meta/cli-args.js';
import { editDistance } from '../../src/spelling.js';

const root = join(import.meta.dirname, '..', '..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

afterEach(() => vi.restoreAllMocks());

/** main() in this process, with stdout and stderr captured (console and process.stdout.write). */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(`${a.join(' ')}\n`));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(`${a.join(' ')}\n`));
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
  const code = await main(argv);
  vi.restoreAllMocks();
  return { code, out: out.join(''), err: err.join('') };
}

test('--version, -v and version print the package version, exit 0', async () => {
  for (const form of ['--version', '-v', 'version']) {
    expect(await cli(form), form).toEqual({ code: 0, out: `${version}\n`, err: '' });
  }
});

test('every command: `<command> --help`, `-h` and `help <command>` print its own usage on stdout, exit 0', async () => {
  const usages: Record<string, string> = { init: INIT_USAGE, sim: SIM_USAGE, compare: COMPARE_USAGE, report: REPORT_USAGE };
  for (const [command, usage] of Object.entries(usages)) {
    for (const argv of [[command, '--help'], [command, '-h'], ['help', command]]) {
      const r = await cli(...argv);
      expect(r, argv.join(' ')).toEqual({ code: 0, out: `${usage}\n`, err: '' });
    }
    expect(usage.startsWith(`usage: llm-speed-matrix ${command}`)).toBe(true);
  }
  const global = await cli('help');
  expect(global.code).toBe(0);
  expect(global.out).toContain('help [command]');
  expect(global.out).toContain('version');
});

test('unknown commands and options: exit 2 on stderr, with the nearest name', async () => {
  const r = await cli('compair', 'a.json', 'b.json');
  expect(r.code).toBe(2);
  expect(r.err).toContain('unknown command "compair" (did you mean compare?)');
  expect(r.out).toBe('');
  expect((await cli('help', 'inti')).err).toContain('unknown command "inti" (did you mean init?)');
  const opt = await cli('init', '--forse');
  expect(opt.code).toBe(2);
  expect(opt.err).toContain('unknown option "--forse" (did you mean --force?)');
  const cmp = await cli('compare', 'a.json', 'b.json', '--thresold', 't.json');
  expect(cmp.code).toBe(2);
  expect(cmp.err).toContain('unknown option "--thresold" (did you mean --thresholds?)');
  const rep = await cli('report', 'a.json', '--lable', 'x');
  expect(rep.err).toContain('unknown option "--lable" (did you mean --label?)');
  const sim = await cli('sim', '--prfile', 'tiny');
  expect(sim.code).toBe(2);
  expect(sim.err).toContain('unknown option "--prfile" (did you mean --profile?)');
  expect(sim.err).toContain(SIM_USAGE);
  expect(sim.out).toBe('');
  expect((await cli('sim', '--llamacpp-slot=off')).err).toContain('unknown option "--llamacpp-slot" (did you mean --llamacpp-slots?)');
  // nothing near: no guess
  expect((await cli('init', '--zzzzzzzz')).err).not.toContain('did you mean');
});

test('the shared parser: values, repeats, missing values, a value that is the next option', () => {
  const spec = { out: { type: 'string' as const, what: 'a file name', example: '--out x.md' }, label: { type: 'string' as const, multiple: true }, force: { type: 'boolean' as const } };
  expect(parseCommandArgs(['a', '--out=x.md', '--label', 'p', '--label=q', '--force', 'b'], spec, true)).toEqual({
    kind: 'ok',
    values: { out: 'x.md', label: ['p', 'q'], force: true },
    positionals: ['a', 'b'],
  });
  expect(parseCommandArgs(['--out'], spec, true)).toEqual({ kind: 'error', message: '--out needs a file name, e.g. --out x.md' });
  expect(parseCommandArgs(['--out', '--force'], spec, true)).toEqual({ kind: 'error', message: '--out needs a file name, e.g. --out x.md' });
  expect(parseCommandArgs(['--out='], spec, true)).toEqual({ kind: 'error', message: '--out needs a file name, e.g. --out x.md' });
  expect(parseCommandArgs(['x', '--help'], spec, false)).toEqual({ kind: 'help' });
  expect(editDistance('forse', 'force')).toBe(1);
  expect(suggest('--shard', ['--shards', '--dir'])).toBe('--shards');
  expect(suggest('--q', ['--shards', '--dir'])).toBeUndefined();
});

test('sim on the shared parser: every option, --name=value, its value checks and missing values, exit 2 before anything listens', async () => {
  expect(parseSimArgs([])).toEqual({ profile: 'tiny', port: 8000, host: '127.0.0.1' });
  expect(
    parseSimArgs(['--profile=sglang-h200', '--port', '0', '--host=::1', '--personality', 'bare', '--tokenizer-json', 't.json', '--llamacpp-metrics=off', '--llamacpp-slots', 'on']),
  ).toEqual({ profile: 'sglang-h200', port: 0, host: '::1', personality: 'bare', tokenizerJson: 't.json', llamacppMetrics: 'off', llamacppSlots: true });
  expect(parseSimArgs(['--port', '9', '-h'], 'allow-help')).toBe('help');
  const bad: Array<[string[], string]> = [
    [['--port', '65536'], '--port 65536 is invalid: use an integer 0–65535 (0 = any free port)'],
    [['--port', '1.5'], '--port 1.5 is invalid'],
    [['--port', ' 80'], '--port  80 is invalid'],
    [['--personality', 'vlm'], '--personality vlm is invalid: use one of vllm, sglang, llamacpp, tgi, trtllm, ollama, bare'],
    [['--llamacpp-metrics', 'b1'], '--llamacpp-metrics b1 is invalid: use one of b4748, current, off'],
    [['--llamacpp-slots', 'yes'], '--llamacpp-slots yes is invalid: use on or off'],
    [['--profile'], '--profile needs a profile name, e.g. --profile tiny'],
    [['--port', '--host', 'x'], '--port needs a port number, e.g. --port 0'],
    [['--host='], '--host needs a host, e.g. --host 127.0.0.1'],
    [['extra'], 'unexpected argument "extra"'],
  ];
  for (const [argv, message] of bad) {
    expect(() => parseSimArgs(argv), argv.join(' ')).toThrow(message);
    const r = await cli('sim', ...argv);
    expect(r.code, argv.join(' ')).toBe(2);
    expect(r.err, argv.join(' ')).toContain(message);
    expect(r.out, argv.join(' ')).toBe('');
  }
});

test('the installed command (bin, built dist/): --version on stdout, exit 0', () => {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'llm-speed-matrix.mjs'), '--version'], { encoding: 'utf8', timeout: 120_000 });
  expect(r.status).toBe(0);
  expect(r.stdout).toBe(`${version}\n`);
});
