/** Loading a local tokenizer.json: every bad file is a ConfigError naming the field and the fix. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { resolveSuite } from '../../src/config/resolve.js';
import { simTokenizerJsonText } from '../../src/sim/tokenizer-json.js';
import { loadLocalTokenizer } from '../../src/tokenizer/local.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-tok-'));
const good = join(dir, 'tokenizer.json');
writeFileSync(good, simTokenizerJsonText());

async function loadError(path: string): Promise<ConfigError> {
  const e = await loadLocalTokenizer(path).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(ConfigError);
  return e as ConfigError;
}

describe('loadLocalTokenizer', () => {
  it('reads a tokenizer.json from a local path and counts without special tokens', async () => {
    const t = await loadLocalTokenizer(good);
    expect(t.path).toBe(good);
    expect(t.count('ab  cd\n')).toBe(2);
    expect(t.count('')).toBe(0);
    expect(await loadLocalTokenizer(good)).toBe(t); // cached per path
  });

  it('a tokenizer.json that starts with a byte-order mark is read', async () => {
    const bom = join(dir, 'bom-tokenizer.json');
    writeFileSync(bom, `\uFEFF${simTokenizerJsonText()}`);
    expect((await loadLocalTokenizer(bom)).count('ab  cd\n')).toBe(2);
  });

  it('a missing file, a directory, non-JSON and a JSON that is no tokenizer are ConfigErrors naming LLM_BENCH_TOKENIZER', async () => {
    const sub = join(dir, 'a-directory');
    mkdirSync(sub, { recursive: true });
    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, '{ nope');
    const notTok = join(dir, 'config.json');
    writeFileSync(notTok, JSON.stringify({ architectures: ['LlamaForCausalLM'] }));
    const badModel = join(dir, 'bad-model.json');
    writeFileSync(badModel, JSON.stringify({ model: { type: 'NoSuchModel', vocab: {} } }));
    const cases: Array<[string, RegExp]> = [
      [join(dir, 'missing.json'), /does not exist/],
      [sub, /is a directory/],
      [notJson, /is not JSON/],
      [notTok, /not a Hugging Face tokenizer\.json/],
      [badModel, /could not be read as a tokenizer\.json|fails to tokenize/],
    ];
    for (const [path, why] of cases) {
      const e = await loadError(path);
      expect(e.message).toMatch(why);
      expect(e.message).toContain('LLM_BENCH_TOKENIZER');
      expect(e.message).toContain('tokenizer.json');
    }
  });
});

describe('target.tokenizer / LLM_BENCH_TOKENIZER', () => {
  it('resolves the path, the variable winning over the suite', () => {
    expect(resolveSuite({ target: { tokenizer: good } }, {}).target.tokenizer).toBe(good);
    expect(resolveSuite({ target: { tokenizer: '/nowhere/x.json' } }, { LLM_BENCH_TOKENIZER: good }).target.tokenizer).toBe(good);
    expect(resolveSuite({}, {}).target.tokenizer).toBeUndefined();
  });

  it('a path that is not a file names the field it came from and the fix', () => {
    expect(() => resolveSuite({}, { LLM_BENCH_TOKENIZER: join(dir, 'missing.json') })).toThrow(/LLM_BENCH_TOKENIZER: .*missing\.json does not exist; .*tokenizer\.json/);
    expect(() => resolveSuite({ target: { tokenizer: dir } }, {})).toThrow(/target\.tokenizer: .* is not a file/);
    expect(() => resolveSuite({ target: { tokenizer: '' } }, {})).toThrow(/target\.tokenizer: give the path of a tokenizer\.json/);
  });
});
