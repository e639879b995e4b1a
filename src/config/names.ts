/**
 * The run's names, checked where the configuration is resolved (resolve.ts): the server's base URL,
 * the simulator profile, and the run's name. Each mistake is a ConfigError naming the field it came
 * from and a right value.
 */
import { ConfigError } from '../errors.js';
import { DEFAULTS, SIM_PROFILE_NAMES } from './defaults.js';
import { nearestName } from '../spelling.js';
import { withoutUrlUserinfo } from '../redact.js';
import { RUN_NAME, RUN_NAME_RULE, URL_WHITESPACE_RULE } from './schema.js';

/**
 * The base URL the run uses: trailing slashes dropped, and a trailing `/v1` removed, because every
 * adapter's paths start with `/v1/…` (OpenAI's client takes `…/v1` as its base URL, so users paste
 * it): `https://gw/api/v1` → `https://gw/api`, said once in `note` so it is not silently doubled.
 * A gateway's path prefix is kept (src/client/base-url.ts splitBaseUrl).
 */
export function baseUrlOf(given: string | undefined): { url: string; note?: string } | undefined {
  if (given === undefined) return undefined;
  const url = given.trim().replace(/\/+$/, '');
  // a URL cannot hold whitespace: the parser would send a space in the path as %20 and drop a tab
  // or a line break without a word, so a pasted "…/api /v1" would measure another path; quoted as
  // given (JSON: a tab shows), its credentials left out
  if (/\s/.test(url)) {
    throw new ConfigError(`target.url / LLM_BENCH_URL: ${JSON.stringify(withoutUrlUserinfo(url))} ${URL_WHITESPACE_RULE}`);
  }
  const u = new URL(url);
  if (u.search !== '' || u.hash !== '') {
    throw new ConfigError(`target.url / LLM_BENCH_URL: "${u.origin}${u.pathname}" must not carry a query or fragment; give the base URL only, e.g. https://gateway.example/api`);
  }
  // an endpoint pasted in for the base: every request would go to …/v1/chat/completions/v1/chat/completions
  const endpoint = /\/v1\/(chat\/completions|completions|models|embeddings)$|\/chat\/completions$/i.exec(u.pathname);
  if (endpoint !== null) {
    const base = `${u.origin}${u.pathname.slice(0, endpoint.index).replace(/\/v1$/i, '')}`;
    throw new ConfigError(`target.url / LLM_BENCH_URL: "${u.origin}${u.pathname}" is an endpoint, not the server's base URL; give the base, e.g. ${base} (the engine's paths, such as /v1/chat/completions, go under it)`);
  }
  if (!/\/v1$/i.test(u.pathname)) return { url };
  const stripped = url.replace(/\/v1$/i, '');
  return {
    url: stripped,
    note: `the URL ends in /v1, so the base URL is ${u.origin}${u.pathname.replace(/\/v1$/i, '')} (engine paths such as /v1/chat/completions go under it, so /v1 is not doubled; /metrics and /tokenize too)`,
  };
}

/**
 * The simulator profile: LLM_BENCH_SIM_PROFILE, target.simProfile or the default, checked to be one
 * there is (before a run starts) where `check`: a run against a server never starts the simulator,
 * so its profile setting is no reason to stop that run.
 */
export function simProfileOf(fromEnv: string | undefined, fromSuite: string | undefined, check = true): string {
  const name = fromEnv ?? fromSuite ?? DEFAULTS.simProfile;
  if (!check || (SIM_PROFILE_NAMES as readonly string[]).includes(name)) return name;
  const env = fromEnv !== undefined;
  const near = nearestName(name, SIM_PROFILE_NAMES);
  throw new ConfigError(
    `${env ? 'LLM_BENCH_SIM_PROFILE' : 'target.simProfile'}: "${name}" is not a simulator profile${near ? ` (did you mean ${near}?)` : ''}; ` +
      `use one of ${SIM_PROFILE_NAMES.join(', ')}, e.g. ${env ? 'LLM_BENCH_SIM_PROFILE=tiny' : "target: { simProfile: 'tiny' }"}`,
  );
}

/** LLM_BENCH_NAME, checked as the suite's `name` is (it becomes a file name: thresholds/<name>.json); undefined where unset or empty */
export function runNameOf(raw: string | undefined): string | undefined {
  const name = raw?.trim();
  if (name === undefined || name === '') return undefined;
  if (!RUN_NAME.test(name)) throw new ConfigError(`LLM_BENCH_NAME: "${name}" names the threshold file thresholds/<name>.json and the page; ${RUN_NAME_RULE}, e.g. LLM_BENCH_NAME=h200-vllm`);
  return name;
}
