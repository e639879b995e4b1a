/**
 * Secret redaction for launch commands and anything else that may reach a page or a log.
 *
 * A flag (`--api-key x`, `--hf-token=x`), an environment assignment (`HF_TOKEN=x`, `-e HF_TOKEN=x`,
 * `--env=OPENAI_API_KEY=x`) or a JSON-ish `"api_key": "x"` pair is redacted when one word of its name
 * (words split on `-`, `_`, `.`) says key, token, secret or password: the word ends with
 * key/token/secret/password/passwd or starts with secret/password (case-insensitive).
 * Word matching keeps counts and paths that merely contain those letters visible
 * (`--max-num-batched-tokens 8192`, `--tokenizer org/model`, `--kv-cache-dtype auto`), as the
 * reference pages show them. URL credentials (`https://user:pass@host`) and `Bearer x` are redacted too.
 */

export const REDACTED = '<redacted>';

/** Does this flag / variable name say key, token, secret or password? */
export function isSecretName(name: string): boolean {
  return name
    .split(/[-_.]+/)
    .some((word) => /(key|token|secret|password|passwd)$/i.test(word) || /^(secret|password)/i.test(word));
}

/** a shell word: double-quoted, single-quoted, or unquoted up to whitespace */
const VALUE = String.raw`(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"']+)`;

// --flag=value | --flag value | -f value (the value must not itself be a flag)
const FLAG = new RegExp(String.raw`(^|\s)(--?[A-Za-z][\w.-]*)(=|\s+)(?!-)(${VALUE})`, 'g');
// NAME=value, at a word start (covers `-e NAME=value`, `--env NAME=value`, `--env=NAME=value`)
const ASSIGNMENT = new RegExp(String.raw`(^|[\s=])([A-Za-z_][\w.-]*)=(${VALUE})`, 'g');
// "api_key": "value" (JSON launch args)
const JSON_PAIR = /("([\w.-]+)"\s*:\s*)("(?:[^"\\]|\\.)*")/g;
const URL_CREDENTIALS = /(\/\/)[^\s/@:]+:[^\s/@]+@/g;
/** any user-info of a URL (with or without a password), up to the @ before the host */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
const BEARER = /(\bBearer\s+)[^\s"']+/gi;

/** Replace every secret value in `text` with `<redacted>`; everything else is left as it was. */
export function redactSecrets(text: string): string {
  return text
    .replace(FLAG, (all, lead: string, name: string, sep: string, value: string) =>
      isSecretName(name) && value !== REDACTED ? `${lead}${name}${sep}${REDACTED}` : all,
    )
    .replace(ASSIGNMENT, (all, lead: string, name: string, value: string) =>
      isSecretName(name) && value !== REDACTED ? `${lead}${name}=${REDACTED}` : all,
    )
    .replace(JSON_PAIR, (all, head: string, name: string) => (isSecretName(name) ? `${head}"${REDACTED}"` : all))
    .replace(URL_CREDENTIALS, `$1${REDACTED}@`)
    .replace(BEARER, `$1${REDACTED}`);
}

/** `scheme://user:password@host` → `scheme://<redacted>@host`, and `scheme://user@host` → `scheme://<redacted>@host`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(URL_USERINFO, `$1${REDACTED}@`);
}

/**
 * One URL as given (a setting, not a text that holds URLs): its user-info left out, everything
 * from the scheme's `//` to the last `@` before the path, spaces included. redactUrlCredentials
 * stops at whitespace, as it must in a text, so it would show part of a password with a space in
 * it; and this works where the URL does not parse, where the parser's own redaction cannot.
 */
export function withoutUrlUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
}

/** Replace each known secret value (e.g. the API key) wherever it appears in a text. */
export function redactValues(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s !== undefined && s.length >= 4) out = out.split(s).join(REDACTED);
  return out;
}
