/**
 * Logging goes to stderr only: stdout carries protocol frames and nothing else. Callers pass
 * fixed text, ids and error codes — never record content or raw exception messages.
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  log(message: string): void;
  debug(message: string): void;
}

export interface StderrLogger extends Logger {
  /** Every line passes through `scrub` (secret redaction) before it is written. */
  scrubWith(scrub: (text: string) => string): void;
}

export function createStderrLogger(level: LogLevel = 'warn', write = (s: string) => process.stderr.write(s)): StderrLogger {
  let scrub = (text: string) => text;
  const at = (l: LogLevel) => (message: string) => {
    if (ORDER[l] <= ORDER[level]) write(`session-sidecar ${l}: ${scrub(message)}\n`);
  };
  return {
    error: at('error'), warn: at('warn'), info: at('info'), log: at('info'), debug: at('debug'),
    scrubWith: (fn) => (scrub = fn),
  };
}

/** Any stray console output (from a dependency, say) goes to stderr, never into the protocol stream. */
export function redirectConsoleToStderr(): void {
  const toStderr = (...args: unknown[]) => {
    process.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : safeDescribe(a))).join(' ')}\n`);
  };
  for (const name of ['log', 'info', 'debug', 'warn', 'error', 'trace', 'table', 'dir'] as const) {
    (console as unknown as Record<string, unknown>)[name] = toStderr;
  }
}

/** Describes an error by name, errno code and stack frames — never by its message. */
export function safeDescribe(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const code = (err as { code?: unknown }).code;
  const frames = (err.stack ?? '').split('\n').filter((l) => l.trimStart().startsWith('at ')).slice(0, 6);
  return [`${err.name}${typeof code === 'string' ? ` ${code}` : ''}`, ...frames].join('\n');
}

/**
 * The logger handed to vscode-jsonrpc: it may embed exception text or message content in its
 * lines, so only the fixed text before the first colon is kept.
 */
export function libraryLogger(log: Logger): Logger {
  const head = (m: string) => `jsonrpc: ${m.split(':')[0]?.slice(0, 80) ?? ''}`;
  return {
    error: (m) => log.warn(head(m)), warn: (m) => log.warn(head(m)), info: (m) => log.debug(head(m)),
    log: (m) => log.debug(head(m)), debug: (m) => log.debug(head(m)),
  };
}
