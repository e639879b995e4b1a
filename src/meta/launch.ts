/**
 * The launch command for the page, and redaction of everything about the server's launch that is
 * stored: the command from the config wins; otherwise the server's own arguments (SGLang
 * server_args from /get_server_info, vLLM's vllm_config from /server_info where exposed) as flags.
 * Flags, environment variables and JSON keys whose names say key, token, secret or password are
 * redacted (src/results/redact.ts), and so is any value passed in `secrets` (the API key) wherever
 * it appears.
 */
import type { ServerFacts } from '../shapes/engine.js';
import { isSecretName, REDACTED, redactSecrets, redactValues } from '../redact.js';


/** A deep copy with secret-named keys' values redacted and secret values removed from every string. */
export function redactRecord(value: unknown, secrets: readonly (string | undefined)[] = [], key?: string): unknown {
  if (key !== undefined && isSecretName(key) && value !== null && value !== undefined && value !== '' && value !== false) return REDACTED;
  if (typeof value === 'string') return redactValues(redactSecrets(value), secrets);
  if (Array.isArray(value)) return value.map((v) => redactRecord(v, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactRecord(v, secrets, k);
    return out;
  }
  return value;
}

/** Server facts safe to store: launch args redacted. */
export function redactFacts(facts: ServerFacts, secrets: readonly (string | undefined)[] = []): ServerFacts {
  if (!facts.launchArgs) return facts;
  return { ...facts, launchArgs: { value: redactRecord(facts.launchArgs.value, secrets) as Record<string, unknown>, source: facts.launchArgs.source } };
}

function flag(key: string, value: unknown): string | undefined {
  if (value === null || value === undefined || value === false || typeof value === 'object') return undefined;
  const name = `--${key.replace(/_/g, '-')}`;
  if (value === true) return name;
  const text = String(value);
  return `${name} ${/[\s"'$`\\]/.test(text) || text === '' ? JSON.stringify(text) : text}`;
}

/**
 * Launch args as command-line flags: top-level scalars, then (vLLM's nested config) the scalars of
 * each nested object, each key once.
 */
export function argsAsFlags(args: Record<string, unknown>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (k: string, v: unknown): void => {
    if (seen.has(k)) return;
    const f = flag(k, v);
    if (f === undefined) return;
    seen.add(k);
    out.push(f);
  };
  for (const [k, v] of Object.entries(args)) add(k, v);
  for (const v of Object.values(args)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) add(k2, v2);
  }
  return out;
}

/** The launch command shown on the page (redacted), or undefined when neither the config nor the server gives one. */
export function launchCommandFrom(configured: string | undefined, facts: ServerFacts, secrets: readonly (string | undefined)[] = []): string | undefined {
  if (configured !== undefined && configured.trim() !== '') return redactValues(redactSecrets(configured), secrets);
  const args = facts.launchArgs;
  if (!args) return undefined;
  const flags = argsAsFlags(args.value);
  if (flags.length === 0) return undefined;
  return redactValues(redactSecrets(`# server arguments reported by ${args.source}\n${flags.join(' ')}`), secrets);
}
